"""Typed tools generated from the registry (seed 000's model): `add_<type>`, `update_<type>`,
`delete_<type>` for each allowed node entry with property definitions.

A typed tool is a friendlier front door to the same gate: its input schema lists the type's fields
(enums, required list, descriptions) nested under the type's name, and every write it makes is
checked and stamped exactly like `write_node`, in one statement with its relationship properties.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from write_gate import cypher
from write_gate.agents import Agent
from write_gate.cypher import Endpoint, Link, Provenance, Statement
from write_gate.decisions import Stamp, check_required, check_types, resolve_relationship_type
from write_gate.formula import compute_confidence
from write_gate.gate import Gate, run_write
from write_gate.identifiers import is_identifier
from write_gate.model import EndpointPolicy, ErrorCode, GateRejection
from write_gate.registry import PropertyType, SchemaEntry, SchemaRegistry
from write_gate.values import check_protected, clean_map

Mode = Literal["add", "update", "delete"]
_PROVENANCE_ARGS = ("source", "extraction_method", "reliability", "endpoint_policy")


def tool_type_name(label: str) -> str:
    """`Npc` -> `npc`, `PlayerCharacter` -> `player_character`, `NPC` -> `npc`."""
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", label).lower()


class LinkWritten(BaseModel):
    type: str
    to_label: str
    to: str
    stub: bool = False


class TypedWritten(BaseModel):
    status: Literal["written"] = "written"
    label: str
    merge_keys: dict[str, Any]
    confidence: float
    write_gate_version: str
    relationships: list[LinkWritten] = Field(default_factory=list)


class TypedDeleted(BaseModel):
    status: Literal["deleted"] = "deleted"
    label: str
    merge_keys: dict[str, Any]


# --- input schemas (what a client validates before calling) --------------------------------------


def _field_schema(spec: PropertyType) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": spec.type}
    if spec.type == "array":
        schema["items"] = {"type": spec.items}
        if spec.enum is not None:
            schema["items"]["enum"] = list(spec.enum)
    elif spec.enum is not None:
        schema["enum"] = list(spec.enum)
    description = spec.description
    if spec.relationship is not None:
        link = f"the name of the {spec.relationship.to_label} it is {spec.relationship.type} (a relationship)"
        description = f"{description} ({link})" if description else link.capitalize()
    if description:
        schema["description"] = description
    return schema


def input_schema(entry: SchemaEntry, mode: Mode, methods: list[str]) -> dict[str, Any]:
    type_name = tool_type_name(entry.label)
    if mode == "delete":
        fields = {k: _field_schema(entry.property_types[k]) for k in entry.merge_keys if k in entry.property_types}
        required = list(entry.merge_keys)
    else:
        fields = {k: _field_schema(spec) for k, spec in entry.property_types.items()}
        required = list(entry.required_properties) if mode == "add" else list(entry.merge_keys)
    # The entry's description is in the tool's own description: not repeated here.
    nested = {"type": "object", "properties": fields, "required": required, "additionalProperties": False}
    schema: dict[str, Any] = {"type": "object", "properties": {type_name: nested}, "required": [type_name]}
    if mode != "delete":
        schema["properties"] |= {
            "source": {"type": "string", "minLength": 1, "description": "Where the claim came from."},
            "extraction_method": {"type": "string", "enum": methods},
            "reliability": {"type": "number", "default": 0.5, "description": "In [0, 1]."},
            "endpoint_policy": {
                "type": "string",
                "enum": ["fail_if_missing", "merge_endpoints"],
                "default": "fail_if_missing",
                "description": "merge_endpoints: a missing relationship target is created as a _stub.",
            },
        }
        schema["required"] += ["source", "extraction_method"]
    schema["additionalProperties"] = False
    return schema


def request_model(entry: SchemaEntry, mode: Mode) -> type[BaseModel]:
    """A loose model for the call's shape; the gate checks the fields themselves (types, enums, required),
    so those rejections carry the gate's error codes."""
    type_name = tool_type_name(entry.label)
    fields: dict[str, Any] = {type_name: (dict[str, Any], ...)}
    if mode != "delete":
        fields |= {
            "source": (str, Field(min_length=1)),
            "extraction_method": (str, ...),
            "reliability": (float, 0.5),
            "endpoint_policy": (EndpointPolicy, "fail_if_missing"),
        }
    return create_model(f"{mode.title()}{entry.label}Request", __config__=ConfigDict(extra="forbid"), **fields)


def generatable(entry: SchemaEntry) -> bool:
    type_name = tool_type_name(entry.label)
    return (
        entry.kind == "node"
        and entry.typed_tools
        and bool(entry.merge_keys)
        and is_identifier(type_name)
        and type_name not in _PROVENANCE_ARGS
    )


# --- planning (pure) -------------------------------------------------------------------------------


@dataclass(frozen=True)
class TypedPlan:
    statement: Statement
    result: TypedWritten
    node: Endpoint
    links: list[Link]


def plan_typed_write(
    entry: SchemaEntry,
    mode: Literal["add", "update"],
    request: BaseModel,
    gate: Gate,
    registry: SchemaRegistry,
    stamp: Stamp,
) -> TypedPlan:
    raw = getattr(request, tool_type_name(entry.label))
    check_protected(raw)
    values, kinds = clean_map(raw, tool_type_name(entry.label), gate.policy.limits)
    unknown = sorted(k for k in values if k not in entry.property_types)
    if unknown:
        raise GateRejection(
            ErrorCode.INVALID_INPUT,
            f"{', '.join(unknown)} is not a property of {entry.label}",
            label=entry.label,
            properties=sorted(entry.property_types),
        )
    merge_keys = _identity(entry, values)
    if mode == "add":
        check_required(entry, values)
    check_types(entry, values, kinds)
    links: list[Link] = []
    properties: dict[str, Any] = {}
    for key, value in values.items():
        spec = entry.property_types[key]
        if spec.relationship is None:
            if key not in merge_keys:
                properties[key] = value
            continue
        links.append(_link(entry, key, spec, value, registry))
    confidence = compute_confidence(gate.provider, request.reliability, request.extraction_method)
    provenance = Provenance(
        confidence, request.source, request.extraction_method, stamp.version, stamp.now, stamp.written_by
    )
    merge_endpoints = request.endpoint_policy == "merge_endpoints"
    statement = cypher.typed_write(
        entry.label, merge_keys, properties, provenance, links, create=mode == "add", merge_endpoints=merge_endpoints
    )
    result = TypedWritten(
        label=entry.label,
        merge_keys=merge_keys,
        confidence=confidence,
        write_gate_version=stamp.version,
        relationships=[
            LinkWritten(type=link.type, to_label=link.target.label, to=str(next(iter(link.target.keys.values()))))
            for link in links
        ],
    )
    return TypedPlan(statement, result, Endpoint(entry.label, merge_keys), links)


def _identity(entry: SchemaEntry, values: Mapping[str, Any]) -> dict[str, Any]:
    """The node's merge keys, every one of which a typed call must give."""
    missing = [k for k in entry.merge_keys if k not in values]
    if missing:
        raise GateRejection(
            ErrorCode.SCHEMA_MISSING_REQUIRED_PROPERTY,
            f"{entry.label} is identified by {', '.join(missing)}",
            label=entry.label,
            missing=missing,
        )
    return {k: values[k] for k in entry.merge_keys}


def _link(entry: SchemaEntry, key: str, spec: PropertyType, value: Any, registry: SchemaRegistry) -> Link:
    assert spec.relationship is not None
    relationship = resolve_relationship_type(spec.relationship.type, registry).entry
    target = registry.get_entry(spec.relationship.to_label)
    if target is None or len(target.merge_keys) > 1:
        raise GateRejection(
            ErrorCode.SCHEMA_UNKNOWN_LABEL,
            f"{entry.label}.{key} points at :{spec.relationship.to_label}, which is not a registered label "
            "identified by one key",
            property=key,
        )
    for side, label, allowed in (
        ("from", entry.label, relationship.from_labels),
        ("to", target.label, relationship.to_labels),
    ):
        if allowed and label not in allowed:
            raise GateRejection(
                ErrorCode.SCHEMA_UNKNOWN_LABEL,
                f"{relationship.label} does not allow :{label} as its {side} endpoint",
                reason="endpoint_label_not_allowed",
                endpoint=side,
                label=label,
                allowed=list(allowed),
            )
    target_key = target.merge_keys[0] if target.merge_keys else "name"
    return Link(relationship.label, Endpoint(target.label, {target_key: value}))


# --- running -----------------------------------------------------------------------------------------


async def _count(gate: Gate, endpoint: Endpoint) -> int:
    rows = await gate.reader.read(cypher.count_matching(endpoint))
    return rows[0]["count"] if rows else 0


async def run_typed(entry: SchemaEntry, mode: Mode, request: BaseModel, gate: Gate, agent: Agent) -> BaseModel:
    registry = gate.registry
    agent.grant.check_labels([entry.label])
    if mode == "delete":
        raw = getattr(request, tool_type_name(entry.label))
        values, _ = clean_map(raw, tool_type_name(entry.label), gate.policy.limits)
        keys = _identity(entry, values)
        extra = sorted(set(values) - set(keys))
        if extra:
            raise GateRejection(
                ErrorCode.INVALID_INPUT, f"delete takes only {', '.join(entry.merge_keys)}", label=entry.label
            )
        allowed = agent.grant.writable_types()
        rows = await run_write(gate.backend, cypher.typed_delete(entry.label, keys, allowed))
        if not rows or not rows[0]["deleted"]:
            node = Endpoint(entry.label, keys)
            if allowed is not None and await _count(gate, node):
                # The node is there: its relationships hold a type the agent may not write (and so not delete).
                rows = await gate.reader.read(cypher.relationship_types_of(node))
                agent.grant.check_types(row["type"] for row in rows)
            raise GateRejection(
                ErrorCode.ENTITY_NOT_FOUND,
                f"no {entry.label} with {_describe(keys)}",
                label=entry.label,
                merge_keys=keys,
            )
        return TypedDeleted(label=entry.label, merge_keys=keys)
    plan = plan_typed_write(entry, mode, request, gate, registry, gate.stamp(agent))
    agent.grant.check_types(link.type for link in plan.links)
    if request.endpoint_policy == "merge_endpoints":
        agent.grant.check_labels(link.target.label for link in plan.links)
    rows = await run_write(gate.backend, plan.statement)
    if rows and rows[0]["written"]:
        if request.endpoint_policy == "merge_endpoints":
            for link, written in zip(plan.links, plan.result.relationships, strict=True):
                written.stub = await _is_stub(gate, link.target)
        return plan.result
    # Nothing was written (the statement is all or nothing): say which part was missing.
    if mode == "update" and not await _count(gate, plan.node):
        raise GateRejection(
            ErrorCode.ENTITY_NOT_FOUND,
            f"no {entry.label} with {_describe(plan.node.keys)}; use add_{tool_type_name(entry.label)}",
            label=entry.label,
        )
    missing = [
        f"{link.target.label} {_describe(link.target.keys)}"
        for link in plan.links
        if not await _count(gate, link.target)
    ]
    raise GateRejection(
        ErrorCode.ENDPOINT_NOT_FOUND,
        f"not found: {', '.join(missing)}; write it first, or pass endpoint_policy='merge_endpoints'",
        missing=missing,
    )


async def _is_stub(gate: Gate, endpoint: Endpoint) -> bool:
    rows = await gate.reader.read(cypher.stub_flag(endpoint))
    return bool(rows and rows[0]["stub"])


def _describe(keys: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in keys.items())

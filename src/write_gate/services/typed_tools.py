"""Typed tools generated from the registry (seed 000's model): `add_<type>`, `update_<type>`,
`delete_<type>` for each allowed node entry with property definitions.

A typed tool is a friendlier front door to the same gate: its input schema lists the type's fields
(enums, required list, descriptions) nested under the type's name, and every write it makes is
checked and stamped exactly like `write_node`, in one statement with its relationship properties.
"""

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal, Protocol, cast

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, create_model

from write_gate.access.agents import Agent
from write_gate.core.cypher import reads as read_cypher
from write_gate.core.cypher.history_writes import ChangeStamp
from write_gate.core.cypher.records import Guard
from write_gate.core.cypher.statement import Endpoint, Provenance, Statement
from write_gate.core.cypher.typed_writes import (
    Link,
    count_matching,
    distinct_targets,
    relationship_types_of,
    typed_delete,
    typed_write,
)
from write_gate.core.decisions import Stamp, check_required, check_types, resolve_relationship_type, without_identity
from write_gate.core.formula import compute_confidence
from write_gate.core.guard import Guarded, revision_of
from write_gate.core.history import Subject
from write_gate.core.identifiers import is_identifier
from write_gate.core.identity import identity_key
from write_gate.core.knowledge import knowledge_values
from write_gate.core.model import EndpointPolicy, ErrorCode, GateRejection, MeetsConflicts, Number
from write_gate.core.properties import Renamed, resolve_property_names, typed_tool_policy
from write_gate.core.registry import PropertyType, SchemaEntry, SchemaRegistry, UndeclaredPolicy
from write_gate.core.values import check_protected, check_source, clean_map
from write_gate.services.aliases import survivor_of
from write_gate.services.change_records import change_stamp
from write_gate.services.embeddings import Subject as Embedded
from write_gate.services.gate import MAX_ATTEMPTS, Gate, Planned, backoff, contention, run_write
from write_gate.services.grant_checks import check_relationship_write
from write_gate.services.hierarchy_rule import hierarchy_cycle, one_parent, parent_below
from write_gate.services.memory import WriterContext

Mode = Literal["add", "update", "delete"]
# The call's own arguments beside the type's object: no type may be named like one.
_CALL_ARGS = ("source", "extraction_method", "reliability", "endpoint_policy", "weight")


def tool_type_name(label: str) -> str:
    """`Npc` -> `npc`, `PlayerCharacter` -> `player_character`, `NPC` -> `npc`."""
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", label).lower()


class LinkWritten(BaseModel):
    type: str
    to_label: str  # where the target was found (or its stub made), when the schema names no nodeType
    to: str
    stub: bool = False
    weight: float = 1.0


class TypedWritten(MeetsConflicts):
    status: Literal["written"] = "written"
    label: str
    merge_keys: dict[str, Any]
    confidence: float
    write_gate_version: str
    relationships: list[LinkWritten] = Field(default_factory=list)
    property_remaps: list[str] = Field(default_factory=list, exclude_if=lambda remaps: not remaps)  # as write_node's


class TypedDeleted(BaseModel):
    status: Literal["deleted"] = "deleted"
    label: str
    merge_keys: dict[str, Any]


# Relationships one typed call may write: each is a few clauses of its one statement.
MAX_TARGETS = 100


def _relationship_keys(entry: SchemaEntry) -> list[str]:
    return [k for k, spec in entry.property_types.items() if spec.relationship is not None]


# --- input schemas (what a client validates before calling) --------------------------------------


def _link_description(spec: PropertyType) -> str:
    """What a relationship property's value means, in few words (every generated tool repeats it)."""
    assert spec.relationship is not None
    rel, target = spec.relationship, spec.relationship.to_label
    if spec.many:
        whom = f"the {target} nodes" if target else "the nodes (any label)"
        return f"the names of {whom} it is {rel.type}; they replace the earlier ones"
    return f"the name of the {target or 'node (any label)'} it is {rel.type}"


def _field_schema(spec: PropertyType) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": spec.type}
    if spec.type == "array":
        schema["items"] = {"type": spec.items}
        if spec.enum is not None:
            schema["items"]["enum"] = list(spec.enum)
        if spec.many:
            schema["maxItems"] = MAX_TARGETS
    elif spec.enum is not None:
        schema["enum"] = list(spec.enum)
    # The schema file's description as it is written (seed 000, 5.2 passes it through); a relationship field
    # without one says what its value means.
    description = spec.description
    if spec.relationship is not None and not description:
        link = _link_description(spec)
        description = link[:1].upper() + link[1:]
    if description:
        schema["description"] = description
    return schema


def _type_schema(entry: SchemaEntry, mode: Mode, *, beside_add: bool) -> dict[str, Any]:
    """The type's object, from the registry entry: its fields (types, enums, descriptions) and what is required.
    `beside_add`: an update listed next to its add_ tool names only the merge keys and refers to add_'s fields
    instead of repeating them."""
    type_name = tool_type_name(entry.label)
    keys = {k: _field_schema(entry.property_types[k]) for k in entry.merge_keys if k in entry.property_types}
    if mode == "delete":
        fields, required = keys, list(entry.merge_keys)
    else:
        fields = {k: _field_schema(spec) for k, spec in entry.property_types.items()}
        required = list(entry.required_properties) if mode == "add" else list(entry.merge_keys)
    if mode == "update" and beside_add:
        described = f"{', '.join(entry.merge_keys)}, and any of add_{type_name}'s {type_name} fields to set"
        return {"type": "object", "description": described, "properties": keys, "required": required}
    # The entry's description is in the tool's own description: not repeated here. Open exactly when the gate
    # writes names the entry does not define (drift of a defined name is remapped to it, and stays closed).
    open_ = typed_tool_policy(entry) is not UndeclaredPolicy.REJECT and mode != "delete"
    return {"type": "object", "properties": fields, "required": required, "additionalProperties": open_}


class ClaimArguments(Protocol):
    """The claim an add_ or update_ request carries: the fields request_model gives the model it builds for them
    (built at run time, so the checker knows them only through this)."""

    @property
    def source(self) -> str: ...

    @property
    def extraction_method(self) -> str: ...

    @property
    def reliability(self) -> float: ...


_SOURCE_SCHEMA = {"type": "string", "minLength": 1, "description": "Where the claim came from (default: the client)."}

# null is taken as "not given", and advertised as nothing but a number.
_Weight = Annotated[float | None, Field(ge=0, le=1), WithJsonSchema({"type": "number", "minimum": 0, "maximum": 1})]


def request_model(
    entry: SchemaEntry, mode: Mode, method_schema: dict[str, Any], *, beside_add: bool = False
) -> type[BaseModel]:
    """The model a typed tool validates a call with and advertises. The gate checks the type's fields itself
    (types, enums, required), so those rejections carry the gate's error codes: the model takes the type's
    object as a map and advertises the registry's fields for it. Likewise extraction_method advertises the
    provider's methods (core.formula.method_schema), which the gate checks (INVALID_EXTRACTION_METHOD)."""
    type_name = tool_type_name(entry.label)
    described = WithJsonSchema(_type_schema(entry, mode, beside_add=beside_add))
    fields: dict[str, Any] = {type_name: (Annotated[dict[str, Any], described], ...)}
    if mode != "delete":
        fields |= {
            # Optional, so that MemoryMesh's agents, whose calls carry no claim, move over unchanged: a call without
            # them is stamped as the memory profile's writes are (the client's name; `llm`, the least trusted of
            # the default formula's methods, so such a write never outweighs a declared fact).
            "source": (
                Annotated[str | None, Field(min_length=1), WithJsonSchema(_SOURCE_SCHEMA)],
                None,
            ),
            "extraction_method": (
                Annotated[
                    str | None, WithJsonSchema({"type": "string", **method_schema, "description": "Default: llm."})
                ],
                None,
            ),
            "reliability": (Number, Field(0.5, description="In [0, 1].")),
        }
        if _relationship_keys(entry):  # the arguments about relationships, where the tool writes some
            fields |= {
                "endpoint_policy": (
                    EndpointPolicy,
                    Field("fail_if_missing", description="merge_endpoints: a missing target becomes a _stub."),
                ),
                "weight": (
                    _Weight,
                    Field(None, description="1.0 if new and not given; averaged into an existing one."),
                ),
            }
    return create_model(f"{mode.title()}{entry.label}Request", __config__=ConfigDict(extra="forbid"), **fields)


def generatable(entry: SchemaEntry) -> bool:
    type_name = tool_type_name(entry.label)
    return (
        entry.kind == "node"
        and entry.typed_tools
        and bool(entry.merge_keys)
        and is_identifier(type_name)
        and type_name not in _CALL_ARGS
    )


# --- planning (pure) -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Wanted:
    """A relationship property as the call gives it: the names of its targets, no label decided yet."""

    key: str
    spec: PropertyType
    names: tuple[str, ...]

    @property
    def by_name(self) -> bool:
        """No nodeType in the schema: each target is looked up by its name across labels."""
        return self.spec.relationship is not None and self.spec.relationship.to_label is None


@dataclass(frozen=True)
class Parsed:
    """A typed call's values, checked against the entry: identity, the node's properties, its links."""

    merge_keys: dict[str, Any]
    properties: dict[str, Any]
    wanted: list[Wanted]
    remaps: tuple[str, ...] = ()

    def names_to_find(self) -> list[str]:
        return list(dict.fromkeys(name for w in self.wanted if w.by_name for name in w.names))


def typed_names(entry: SchemaEntry, raw: Mapping[str, Any], gate: Gate) -> Renamed:
    """The type's object with its names as the entry defines them, under its typed tools' policy
    (`typed_tool_policy`): the same decision write_node makes, so drift is remapped on every path."""
    check_protected(raw)
    values, kinds = clean_map(raw, tool_type_name(entry.label), gate.policy.limits)
    return resolve_property_names(entry, values, kinds, typed_tool_policy(entry), what=tool_type_name(entry.label))


def parse_values(entry: SchemaEntry, mode: Literal["add", "update"], raw: Mapping[str, Any], gate: Gate) -> Parsed:
    renamed = typed_names(entry, raw, gate)
    values = knowledge_values(renamed.values, tool_type_name(entry.label), entry.property_types)
    kinds = renamed.kinds
    known = set(entry.property_types) | set(entry.merge_keys)
    extra = {k: v for k, v in values.items() if k not in known}
    merge_keys = _identity(entry, values)
    if extra:  # names the entry does not define, which its policy keeps: no spelling of a merge key among them
        without_identity(merge_keys, extra)
    if mode == "add":
        check_required(entry, values)
    check_types(entry, values, kinds)
    properties: dict[str, Any] = dict(extra)
    wanted: list[Wanted] = []
    for key in values:  # in the call's order, which the answer's relationships keep
        spec = entry.property_types.get(key)
        if spec is None or key in merge_keys:
            continue
        if spec.relationship is None:
            properties[key] = values[key]
        else:
            names = values[key] if spec.many else [values[key]]
            wanted.append(Wanted(key, spec, tuple(dict.fromkeys(names))))
    count = sum(len(w.names) for w in wanted)
    if count > MAX_TARGETS:  # before any target is looked up
        raise GateRejection(
            ErrorCode.INVALID_INPUT,
            f"this call names {count} relationship targets, over the limit",
            limit="max_relationships",
            max=MAX_TARGETS,
        )
    return Parsed(merge_keys, properties, wanted, renamed.remaps)


@dataclass(frozen=True)
class TypedPlan:
    result: TypedWritten
    links: list[Link]
    properties: Mapping[str, Any]
    provenance: Provenance
    # The statement, given the properties the conflict policies let through and the guard (services compile it).
    compile: Callable[[Mapping[str, Any], Guard], Statement]
    # The parent a link of the hierarchy's type names, and the argument naming it: the statement writes it only
    # where it is not the node's descendant (the caller reads why nothing was written).
    parent: tuple[str, Endpoint] | None = None

    def targets(self) -> list[Endpoint]:
        return distinct_targets(self.links)


def plan_typed_write(
    entry: SchemaEntry,
    mode: Literal["add", "update"],
    request: ClaimArguments,
    parsed: Parsed,
    found: Mapping[str, list[str]],
    gate: Gate,
    stamp: Stamp,
) -> TypedPlan:
    """`found`: each name looked up for a target without nodeType, and the labels (identified by name) that
    have a node of that name."""
    registry = gate.registry
    merge_endpoints = getattr(request, "endpoint_policy", None) == "merge_endpoints"
    weight = getattr(request, "weight", None)
    if weight is not None and not parsed.wanted:
        raise GateRejection(
            ErrorCode.INVALID_INPUT,
            f"weight applies to the relationships a call writes, and this one names none of {entry.label}'s "
            f"({', '.join(_relationship_keys(entry))})",
            field="weight",
        )
    targets: dict[str, dict[tuple[str, str], Endpoint]] = {}  # type -> its targets, in call order, once each
    fields: dict[str, str] = {}  # type -> the argument that first names it
    for want in parsed.wanted:
        assert want.spec.relationship is not None
        relationship = resolve_relationship_type(want.spec.relationship.type, registry).entry
        _check_endpoint(relationship, "from", entry.label)
        fields.setdefault(relationship.label, want.key)
        group = targets.setdefault(relationship.label, {})
        for name in want.names:
            if want.by_name:
                target = _found_target(entry, want.key, relationship, name, found, gate, merge_endpoints)
            else:
                target = _declared_target(entry, want.key, want.spec, relationship, name, registry)
            group.setdefault((target.label, target.key), target)
    links = [Link(type_, tuple(group.values())) for type_, group in targets.items()]
    parent = _parent(entry.label, identity_key(parsed.merge_keys), links, gate.policy.hierarchy_type, fields)
    confidence = compute_confidence(gate.provider, request.reliability, request.extraction_method)
    check_source(request.source, gate.policy.limits)
    provenance = Provenance(
        confidence, request.source, request.extraction_method, stamp.version, stamp.now, stamp.written_by
    )
    compile = functools.partial(
        _compile,
        entry.label,
        parsed.merge_keys,
        provenance=provenance,
        links=links,
        create=mode == "add",
        merge_endpoints=merge_endpoints,
        weight=weight,
        property_remaps=parsed.remaps,
        dialect=gate.backend.dialect,
        hierarchy=gate.policy.hierarchy_type if parent is not None else None,
    )
    result = TypedWritten(
        label=entry.label,
        merge_keys=parsed.merge_keys,
        confidence=confidence,
        write_gate_version=stamp.version,
        relationships=[
            LinkWritten(type=link.type, to_label=t.label, to=str(t.keys[next(iter(t.keys))]))
            for link in links
            for t in link.targets
        ],
        property_remaps=list(parsed.remaps),
    )
    return TypedPlan(result, links, parsed.properties, provenance, compile, parent)


def _parent(
    label: str, key: str, links: list[Link], hierarchy_type: str, fields: Mapping[str, str]
) -> tuple[str, Endpoint] | None:
    """The one parent the call's link of the hierarchy's type names (seed 004: one parent a child, no cycle; a link
    replaces the node's old ones of its type), with its argument; refused where it names two, or the node itself."""
    link = next((link for link in links if link.type == hierarchy_type), None)
    if link is None or not link.targets:
        return None
    field = fields[hierarchy_type]
    if len(link.targets) > 1:
        raise one_parent(hierarchy_type, "the call gives the entity two parents", field=field)
    [target] = link.targets
    if (target.label, target.key) == (label, key):
        raise hierarchy_cycle(field)
    return field, target


def _compile(
    label: str,
    merge_keys: Mapping[str, Any],
    properties: Mapping[str, Any],
    guard: Guard,
    *,
    provenance: Provenance,
    **shape: Any,
) -> Statement:
    """The records of one write share its id: the guard's (its values') and the replaced links'."""
    change = ChangeStamp(guard.change_id, provenance.last_updated, provenance.written_by)
    return typed_write(label, merge_keys, properties, provenance, guard=guard, change=change, **shape)


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
    empty = [k for k in entry.merge_keys if values[k] == ""]
    if empty:  # MemoryMesh's validation (seed 000, 11.1: a node's name is a non-empty string), as add_nodes has it
        raise GateRejection(
            ErrorCode.INVALID_INPUT, f"{', '.join(empty)} must not be empty", label=entry.label, field=empty[0]
        )
    return {k: values[k] for k in entry.merge_keys}


def _check_endpoint(relationship: SchemaEntry, side: str, label: str) -> None:
    allowed = relationship.from_labels if side == "from" else relationship.to_labels
    if allowed and label not in allowed:
        raise GateRejection(
            ErrorCode.SCHEMA_UNKNOWN_LABEL,
            f"{relationship.label} does not allow :{label} as its {side} endpoint",
            reason="endpoint_label_not_allowed",
            endpoint=side,
            label=label,
            allowed=list(allowed),
        )


def _declared_target(
    entry: SchemaEntry, key: str, spec: PropertyType, relationship: SchemaEntry, name: str, registry: SchemaRegistry
) -> Endpoint:
    """The schema names the target's label (nodeType): the target is that label's node of this name."""
    assert spec.relationship is not None and spec.relationship.to_label is not None
    target = registry.get_entry(spec.relationship.to_label)
    if target is None or len(target.merge_keys) > 1:
        raise GateRejection(
            ErrorCode.SCHEMA_UNKNOWN_LABEL,
            f"{entry.label}.{key} points at :{spec.relationship.to_label}, which is not a registered label "
            "identified by one key",
            property=key,
        )
    _check_endpoint(relationship, "to", target.label)
    target_key = target.merge_keys[0] if target.merge_keys else "name"
    return Endpoint(target.label, {target_key: name})


def name_keyed_labels(registry: SchemaRegistry) -> list[str]:
    """Where a target without nodeType may be: the labels whose nodes are identified by their name alone."""
    return [
        label
        for label in registry.all_canonical_labels()
        if (e := registry.get_entry(label)) is not None and e.merge_keys == ("name",)
    ]


def _found_target(
    entry: SchemaEntry,
    key: str,
    relationship: SchemaEntry,
    name: str,
    found: Mapping[str, list[str]],
    gate: Gate,
    merge_endpoints: bool,
) -> Endpoint:
    """No nodeType: the one node of this name in a label the relationship type allows; none found, a stub
    under the fallback label (merge_endpoints) or ENDPOINT_NOT_FOUND; several, a rejection naming them."""
    labels = found.get(name, [])
    allowed = [label for label in labels if not relationship.to_labels or label in relationship.to_labels]
    if len(allowed) == 1:
        return Endpoint(allowed[0], {"name": name})
    if len(allowed) > 1:
        raise GateRejection(
            ErrorCode.INVALID_INPUT,
            f"{entry.label}.{key}: {name!r} names a node in each of {', '.join(allowed)}; the schema gives no "
            "nodeType to choose by: write this relationship with write_relationship, naming to_label",
            reason="ambiguous_target",
            property=key,
            name=name,
            labels=allowed,
        )
    if labels:  # there is such a node, under a label this type does not take
        _check_endpoint(relationship, "to", labels[0])
    if not merge_endpoints:
        raise GateRejection(
            ErrorCode.ENDPOINT_NOT_FOUND,
            f"not found: {name!r} in any label identified by name; write it first, or pass "
            "endpoint_policy='merge_endpoints' to create it as a stub",
            missing=[_describe({"name": name})],
            property=key,
        )
    stub = _stub_label(gate, relationship)
    if stub is None:
        raise GateRejection(
            ErrorCode.SCHEMA_UNKNOWN_LABEL,
            f"{entry.label}.{key}: {name!r} is in no label, and the schema gives no nodeType to create it under: "
            f"the registry's fallback label must take it (identified by name alone, and a {relationship.label} "
            "target)",
            reason="no_stub_label",
            property=key,
            fallback_label=gate.policy.fallback_override or gate.registry.fallback_label(),
        )
    return Endpoint(stub, {"name": name})


def _stub_label(gate: Gate, relationship: SchemaEntry) -> str | None:
    """The label a target without nodeType is created under by merge_endpoints: the registry's fallback."""
    fallback = gate.policy.fallback_override or gate.registry.fallback_label()
    entry = gate.registry.get_entry(fallback) if fallback else None
    if entry is None or entry.merge_keys != ("name",):
        return None
    if relationship.to_labels and entry.label not in relationship.to_labels:
        return None
    return entry.label


# --- running -----------------------------------------------------------------------------------------


async def _count(gate: Gate, endpoint: Endpoint) -> int:
    rows = await gate.reader.read(count_matching(endpoint))
    return rows[0]["count"] if rows else 0


async def find_targets(gate: Gate, names: list[str]) -> dict[str, list[str]]:
    """Each name's labels (among those identified by name alone) that have a node of that name."""
    labels = name_keyed_labels(gate.registry)
    statement = read_cypher.ids_by_name(labels, [])
    if statement is None or not names:
        return {}
    params = {"names": names, "name_keys": [identity_key({"name": name}) for name in names]}
    found: dict[str, list[str]] = {}
    for row in await gate.reader.read(Statement(statement.text, params)):
        hits = found.setdefault(row["name"], [])
        hits += [label for label in row["labels"] if label in labels and label not in hits]
    return found


async def run_typed(
    entry: SchemaEntry,
    mode: Mode,
    request: BaseModel,
    gate: Gate,
    agent: Agent,
    writer: WriterContext,
    *,
    refuse_existing: Callable[[], GateRejection] | None = None,
) -> BaseModel:
    """`writer`: the claim of a call that declares none (the memory profile's provenance defaults).
    `refuse_existing`: an add's refusal of a node that exists (MemoryMesh's add tools create, never update),
    decided on the node as read for the guarded write, so of two adds of one node at once one is refused."""
    agent.grant.check_labels([entry.label])
    if mode == "delete":
        return await _delete(entry, request, gate, agent)
    parsed = parse_values(entry, mode, getattr(request, tool_type_name(entry.label)), gate)
    # An add_ or update_ request: request_model gave it these fields, source and method None where not declared.
    given = cast(ClaimArguments, request)
    defaults = {
        "source": given.source or writer.source,
        "extraction_method": given.extraction_method or writer.extraction_method,
    }
    claim = cast(ClaimArguments, request.model_copy(update=defaults))
    found = await find_targets(gate, parsed.names_to_find())
    node = Endpoint(entry.label, parsed.merge_keys)
    try:
        plan = plan_typed_write(entry, mode, claim, parsed, found, gate, gate.stamp(agent))
    except GateRejection as exc:  # a target not found by name: an update's missing node is said first
        if mode == "update" and exc.rejected.error_code is ErrorCode.ENDPOINT_NOT_FOUND:
            await _check_node(gate, entry, node)
        raise
    for attempt in range(MAX_ATTEMPTS):
        await backoff(attempt)
        creates_targets = getattr(request, "endpoint_policy", None) == "merge_endpoints"
        types, targets = (link.type for link in plan.links), (target.label for target in plan.targets())
        check_relationship_write(agent.grant, types, targets, creates_targets)
        key = identity_key(parsed.merge_keys)
        guarded = await _guarded(gate, entry, key, parsed, plan)
        if refuse_existing is not None and guarded.revision != 0:
            raise refuse_existing()
        statement = plan.compile(guarded.write, guarded.as_guard(guarded.revision == 0))
        if gate.embeddings is not None:  # what it writes of the embedded fields, in the same statement
            embedded = [Embedded(entry.label, key, {**parsed.merge_keys, **guarded.write})]
            statement = await gate.embeddings.lead(statement, gate.registry, embedded)
        rows = await run_write(gate.backend, statement)
        if rows and rows[0]["written"]:
            plan = replace(plan, result=plan.result.model_copy(update={"conflicts": guarded.met}))
            break
        if (redirected := await _past_aliases(gate, entry, parsed, plan)) is None:
            if await _revision(gate, entry.label, key) != guarded.revision:
                continue  # another writer moved the node since it was read: decide again
            break
        # The node or a target is an alias (merge_entities): write to its survivor instead.
        parsed = redirected
        node = Endpoint(entry.label, parsed.merge_keys)
        found = await find_targets(gate, parsed.names_to_find())
        plan = plan_typed_write(entry, mode, claim, parsed, found, gate, gate.stamp(agent))
    else:
        raise contention()
    if rows and rows[0]["written"]:
        stubs = dict(zip(((t.label, t.key) for t in plan.targets()), rows[0]["stubs"][0], strict=True))
        pairs = [t for link in plan.links for t in link.targets]
        for written, target, weight in zip(plan.result.relationships, pairs, rows[0]["weights"][0], strict=True):
            written.weight, written.stub = weight, bool(stubs[(target.label, target.key)])
        return plan.result
    # Nothing was written (the statement is all or nothing): say which part was missing.
    if mode == "update":
        await _check_node(gate, entry, node)
    if plan.parent is not None:
        field, parent = plan.parent
        if await parent_below(gate.reader.read, gate.policy.hierarchy_type, node, parent):
            raise hierarchy_cycle(field)
    missing = [f"{t.label} {_describe(t.keys)}" for t in plan.targets() if not await _count(gate, t)]
    raise GateRejection(
        ErrorCode.ENDPOINT_NOT_FOUND,
        f"not found: {', '.join(missing)}; write it first, or pass endpoint_policy='merge_endpoints'",
        missing=missing,
    )


async def _revision(gate: Gate, label: str, key: str) -> int:
    return revision_of(await gate.current_node(label, key))


async def _guarded(gate: Gate, entry: SchemaEntry, key: str, parsed: Parsed, plan: TypedPlan) -> Guarded:
    """The node's values decided under the conflict policies on what it holds now (an add creates it: its
    merge keys are recorded too)."""
    current = await gate.current_node(entry.label, key)
    planned = Planned(plan.properties, parsed.merge_keys, plan.provenance)
    return gate.guard(Subject.node(entry.label, key), entry, current, planned)


async def _past_aliases(gate: Gate, entry: SchemaEntry, parsed: Parsed, plan: TypedPlan) -> Parsed | None:
    """The call's values addressed to survivors where its node or targets are aliases; None if none is. A node
    merged into another label cannot be written by this label's tool: that is refused, naming the label."""
    read, registry = gate.reader.read, gate.registry
    keys = parsed.merge_keys
    survivor = await survivor_of(read, registry, entry.label, identity_key(keys))
    if survivor is not None:
        if survivor.label != entry.label:
            raise GateRejection(
                ErrorCode.INVALID_INPUT,
                f"this {entry.label} was merged into a :{survivor.label}; write that node instead",
                reason="merged_into_other_label",
                label=survivor.label,
            )
        keys = survivor.keys
    renamed: dict[str, str] = {}
    for target in plan.targets():
        moved = await survivor_of(read, registry, target.label, target.key)
        name, new_name = target.keys.get("name"), moved.keys.get("name") if moved else None
        if isinstance(name, str) and isinstance(new_name, str):
            renamed[name] = new_name
    if survivor is None and not renamed:
        return None
    wanted = [replace(w, names=tuple(renamed.get(n, n) for n in w.names)) for w in parsed.wanted]
    return replace(parsed, merge_keys=dict(keys), wanted=wanted)


async def _check_node(gate: Gate, entry: SchemaEntry, node: Endpoint) -> None:
    """An update's node must exist: ENTITY_NOT_FOUND otherwise."""
    if not await _count(gate, node):
        raise GateRejection(
            ErrorCode.ENTITY_NOT_FOUND,
            f"no {entry.label} with {_describe(node.keys)}; use add_{tool_type_name(entry.label)}",
            label=entry.label,
        )


async def _delete(entry: SchemaEntry, request: BaseModel, gate: Gate, agent: Agent) -> TypedDeleted:
    what = tool_type_name(entry.label)
    values, kinds = clean_map(getattr(request, what), what, gate.policy.limits)
    # Drift of a key is remapped as on every write; any other name is refused just below.
    values = resolve_property_names(entry, values, kinds, UndeclaredPolicy.REMAP, what=what).values
    keys = _identity(entry, values)
    extra = sorted(set(values) - set(keys))
    if extra:
        raise GateRejection(
            ErrorCode.INVALID_INPUT, f"delete takes only {', '.join(entry.merge_keys)}", label=entry.label
        )
    allowed = agent.grant.writable_types()
    rows = await run_write(
        gate.backend,
        typed_delete(entry.label, keys, allowed, change_stamp(agent.id), vectors=gate.embeddings is not None),
    )
    if not rows or not rows[0]["deleted"]:
        node = Endpoint(entry.label, keys)
        if allowed is not None and await _count(gate, node):
            # The node is there: its relationships hold a type the agent may not write (and so not delete).
            rows = await gate.reader.read(relationship_types_of(node))
            agent.grant.check_types(row["type"] for row in rows)
        raise GateRejection(
            ErrorCode.ENTITY_NOT_FOUND,
            f"no {entry.label} with {_describe(keys)}",
            label=entry.label,
            merge_keys=keys,
        )
    return TypedDeleted(label=entry.label, merge_keys=keys)


def _describe(keys: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in keys.items())

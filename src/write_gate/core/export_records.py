"""What an export holds of each node and relationship, shaped from what the engine stores. Pure.

A node's identity is `label:_key` in every format (`Person:{"name":"Mercury"}` and `Project:{"name":"Mercury"}`
are two nodes); memory-mcp's fields (name, entityType, observations, tags, importance, parentId, lastModified)
come beside the gate's (keys, properties, provenance), so either kind of reader finds what it knows.
"""

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from write_gate.core.claims import CLAIM_PREFIX
from write_gate.core.identifiers import CREATED_FIELD, PROVENANCE_FIELDS
from write_gate.core.identity import KEY_FIELD
from write_gate.core.knowledge import DEFAULT_HIERARCHY_TYPE

# memory-mcp's fields, given on their own.
_OWN_FIELDS = ("name", "observations", "tags", "importance")
HIERARCHY_TYPE = DEFAULT_HIERARCHY_TYPE  # child -> parent (the knowledge tools' hierarchy), unless renamed


def node_id(label: str, key: str) -> str:
    return f"{label}:{key}"


@dataclass(frozen=True)
class ExportedNode:
    id: str
    label: str
    keys: dict[str, Any]
    name: str | None
    observations: list[str]
    tags: list[str]
    importance: float | None
    created_at: str | None
    last_modified: str | None
    properties: dict[str, Any]
    provenance: dict[str, Any]  # the gate's stamps as stored (core.identifiers.PROVENANCE_FIELDS)
    parent: str | None = None  # the parent's name, when it has a CHILD_OF
    claims: dict[str, Any] = field(default_factory=dict)  # each value's stored claim (core.claims), for PROV

    def with_parent(self, parent: str | None) -> "ExportedNode":
        return replace(self, parent=parent) if parent is not None else self


@dataclass(frozen=True)
class ExportedRelation:
    from_id: str
    to_id: str
    from_name: str | None
    to_name: str | None
    type: str
    weight: float | None
    properties: dict[str, Any]
    provenance: dict[str, Any]
    claims: dict[str, Any] = field(default_factory=dict)  # each value's stored claim (core.claims), for PROV


@dataclass
class ExportedGraph:
    nodes: list[ExportedNode] = field(default_factory=list)
    relations: list[ExportedRelation] = field(default_factory=list)


def _visible(props: Mapping[str, Any]) -> dict[str, Any]:
    """Every property an answer shows: none of the gate's own (`_key`, claims, folds, archive marks)."""
    return {k: v for k, v in props.items() if not k.startswith("_")}


def merge_keys_of(props: Mapping[str, Any], declared: Sequence[str]) -> dict[str, Any]:
    """The node's merge keys: the registry's, as stored; else its `_key` read back (a hashed one reads as none)."""
    if declared and all(k in props for k in declared):
        return {k: props[k] for k in declared}
    try:
        keys = json.loads(props[KEY_FIELD])
    except (KeyError, TypeError, ValueError):
        return {}
    return keys if isinstance(keys, dict) else {}


def value_claims(props: Mapping[str, Any]) -> dict[str, Any]:
    """Each value's claim (`_p_<prop>`) as stored, by property name; parsed only by the format that shows them
    (PROV), so the other formats do not pay for it."""
    return {k.removeprefix(CLAIM_PREFIX): v for k, v in props.items() if k.startswith(CLAIM_PREFIX)}


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def display_name(props: Mapping[str, Any], keys: Mapping[str, Any]) -> str | None:
    name = props.get("name")
    if isinstance(name, str):
        return name
    return ",".join(f"{k}={v}" for k, v in keys.items()) or None


def exported_node(label: str, props: Mapping[str, Any], declared_keys: Sequence[str]) -> ExportedNode:
    """One node of `label` (the registered label it was exported under) from its stored properties."""
    keys = merge_keys_of(props, declared_keys)
    visible = _visible(props)
    shown_apart = {*_OWN_FIELDS, *PROVENANCE_FIELDS, *keys, CREATED_FIELD}
    return ExportedNode(
        id=node_id(label, props[KEY_FIELD]),
        label=label,
        keys=keys,
        name=display_name(props, keys),
        observations=_strings(props.get("observations")),
        tags=_strings(props.get("tags")),
        importance=_number(props.get("importance")),
        created_at=_text(props.get(CREATED_FIELD)),
        last_modified=_text(props.get("last_updated")),
        properties={k: v for k, v in visible.items() if k not in shown_apart},
        provenance={k: visible[k] for k in PROVENANCE_FIELDS if k in visible},
        claims=value_claims(props),
    )


def exported_relation(
    from_id: str, to_id: str, from_name: str | None, to_name: str | None, type_: str, props: Mapping[str, Any]
) -> ExportedRelation:
    visible = _visible(props)
    return ExportedRelation(
        from_id=from_id,
        to_id=to_id,
        from_name=from_name,
        to_name=to_name,
        type=type_,
        weight=_number(visible.get("weight")),
        properties={k: v for k, v in visible.items() if k not in {"weight", CREATED_FIELD, *PROVENANCE_FIELDS}},
        # The gate's stamps as stored (a relationship's created_at among them: no agent sets it).
        provenance={k: visible[k] for k in (*PROVENANCE_FIELDS, CREATED_FIELD) if k in visible},
        claims=value_claims(props),
    )

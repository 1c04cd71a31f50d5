"""`get_schema`: the registry snapshot as agents need it, with live counts."""

from typing import Any

from pydantic import BaseModel, Field

from write_gate.core.decisions import Policy
from write_gate.core.properties import effective_policy
from write_gate.core.registry import ConflictPolicy, SchemaEntry, UndeclaredPolicy


class EntryView(BaseModel):
    name: str
    description: str = ""
    required_properties: list[str] = Field(default_factory=list)
    absorbs: list[str] = Field(default_factory=list)
    property_types: dict[str, dict[str, Any]] = Field(default_factory=dict)
    undeclared_properties: UndeclaredPolicy = Field(
        description="What write_node does with a property name it does not declare: allow, remap or reject."
    )
    conflict_policy: ConflictPolicy = Field(
        description="What a write does to a value another writer claims (a property's own is in property_types)."
    )
    half_life_days: float | None = Field(
        description="Claims on its values lose half their confidence every this many days; null: by method."
    )
    count: int = Field(description="How many nodes (or relationships) have it now.")


class LabelView(EntryView):
    merge_keys: list[str] = Field(default_factory=list)
    fallback: bool = False


class RelationshipTypeView(EntryView):
    from_labels: list[str] = Field(default_factory=list, description="Allowed start labels; empty: any.")
    to_labels: list[str] = Field(default_factory=list, description="Allowed end labels; empty: any.")


class SchemaView(BaseModel):
    node_labels: list[LabelView]
    relationship_types: list[RelationshipTypeView]
    fallback_label: str | None
    unknown_label_policy: str
    undeclared_property_policy: str
    # The gate's defaults for entries that name none of their own.
    conflict_policy: str
    decay_half_life_days: dict[str, float] = Field(description="Half-lives by extraction method.")
    history_retention_days: float | None = Field(description="null: the history keeps every record.")
    extraction_methods: list[str]
    write_gate_version: str


def _common(entry: SchemaEntry, count: int, policy: Policy) -> dict[str, Any]:
    return {
        "name": entry.label,
        "description": entry.description,
        "required_properties": list(entry.required_properties),
        "absorbs": list(entry.remaps_from),
        "property_types": {k: t.to_json() for k, t in entry.property_types.items()},
        "undeclared_properties": effective_policy(entry, policy.undeclared_properties),
        "conflict_policy": entry.conflict_policy or policy.conflicts,
        "half_life_days": entry.half_life_days,
        "count": count,
    }


def label_view(entry: SchemaEntry, count: int, policy: Policy) -> LabelView:
    """`policy`: the gate's, for what an entry names none of."""
    return LabelView(**_common(entry, count, policy), merge_keys=list(entry.merge_keys), fallback=entry.fallback)


def relationship_view(entry: SchemaEntry, count: int, policy: Policy) -> RelationshipTypeView:
    return RelationshipTypeView(
        **_common(entry, count, policy), from_labels=list(entry.from_labels), to_labels=list(entry.to_labels)
    )


def gate_defaults(policy: Policy) -> dict[str, Any]:
    """The gate's own policies, as get_schema names them."""
    return {
        "unknown_label_policy": policy.unknown_labels.value,
        "undeclared_property_policy": policy.undeclared_properties.value,
        "conflict_policy": policy.conflicts.value,
        "decay_half_life_days": dict(policy.half_life_by_method),
        "history_retention_days": policy.history_retention_days,
    }

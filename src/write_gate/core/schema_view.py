"""`get_schema`: the registry snapshot as agents need it, with live counts."""

from typing import Any

from pydantic import BaseModel, Field

from write_gate.core.properties import effective_policy
from write_gate.core.registry import SchemaEntry, UndeclaredPolicy


class EntryView(BaseModel):
    name: str
    description: str = ""
    required_properties: list[str] = Field(default_factory=list)
    absorbs: list[str] = Field(default_factory=list)
    property_types: dict[str, dict[str, Any]] = Field(default_factory=dict)
    undeclared_properties: UndeclaredPolicy = Field(
        description="What write_node does with a property name it does not declare: allow, remap or reject."
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
    extraction_methods: list[str]
    write_gate_version: str


def _common(entry: SchemaEntry, count: int, default: UndeclaredPolicy) -> dict[str, Any]:
    return {
        "name": entry.label,
        "description": entry.description,
        "required_properties": list(entry.required_properties),
        "absorbs": list(entry.remaps_from),
        "property_types": {k: t.to_json() for k, t in entry.property_types.items()},
        "undeclared_properties": effective_policy(entry, default),
        "count": count,
    }


def label_view(entry: SchemaEntry, count: int, default: UndeclaredPolicy) -> LabelView:
    """`default`: the gate's policy for entries that name none."""
    return LabelView(**_common(entry, count, default), merge_keys=list(entry.merge_keys), fallback=entry.fallback)


def relationship_view(entry: SchemaEntry, count: int, default: UndeclaredPolicy) -> RelationshipTypeView:
    return RelationshipTypeView(
        **_common(entry, count, default), from_labels=list(entry.from_labels), to_labels=list(entry.to_labels)
    )

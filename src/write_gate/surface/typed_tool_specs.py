"""Typed tools' specs (`add_/update_/delete_<type>`), generated from the registry snapshot."""

from typing import Any

from write_gate.core.registry import SchemaEntry, SchemaRegistry
from write_gate.services.typed_tools import (
    Mode,
    TypedDeleted,
    TypedWritten,
    generatable,
    request_model,
    run_typed,
    tool_type_name,
)
from write_gate.surface.tool_schemas import input_schema
from write_gate.surface.tool_spec import Handler, ToolSpec, lean_hints

_TYPED_VERBS: dict[Mode, str] = {
    "add": "Create (or update) a {label}{description}.",
    "update": "Set the given fields of an existing {label} (found by {keys}){rels}.",
    "delete": "Delete a {label} and its relationships.",
}


def typed_specs(registry: SchemaRegistry, method_schema: dict[str, Any]) -> tuple[ToolSpec, ...]:
    """add_/update_/delete_<type> for each allowed node entry with property definitions."""
    specs = []
    for label in registry.all_canonical_labels():
        entry = registry.get_entry(label)
        if entry is None or not generatable(entry):
            continue
        rels = [k for k, t in entry.property_types.items() if t.relationship]
        for mode, text in _TYPED_VERBS.items():
            description = text.format(
                label=label,
                description=f": {entry.description.rstrip('.')}" if entry.description else "",
                keys=", ".join(entry.merge_keys),
                rels=f"; a new {', '.join(rels)} replaces the old relationship" if rels else "",
            )
            specs.append(
                ToolSpec(
                    name=f"{mode}_{tool_type_name(label)}",
                    title=None,  # `add_npc` says what "Add a Npc" did
                    description=description,
                    input_model=request_model(entry, mode, method_schema),
                    output_model=TypedDeleted if mode == "delete" else TypedWritten,
                    # MERGE, or a relationship replaced by the same one: a repeat changes nothing; unless it
                    # writes relationships, whose weight a repeat averages again (as write_relationship's).
                    annotations=lean_hints(destructive=mode == "delete", idempotent=mode == "delete" or not rels),
                    handler=_typed_handler(entry, mode),
                    label=label,
                    brief=(
                        (
                            f"add_{tool_type_name(label)}",
                            input_schema(request_model(entry, "update", method_schema, beside_add=True)),
                        )
                        if mode == "update"
                        else None
                    ),
                )
            )
    return tuple(specs)


def _typed_handler(entry: SchemaEntry, mode: Mode) -> Handler:
    return lambda s, req, call: run_typed(entry, mode, req, s.gate, call.agent, call.writer)

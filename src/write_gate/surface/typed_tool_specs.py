"""Typed tools' specs (`add_/update_/delete_<type>`), generated from the registry snapshot."""

from typing import Any

from pydantic import BaseModel

from write_gate.core.registry import SchemaEntry, SchemaRegistry
from write_gate.services.mesh import NamesAnswer
from write_gate.services.mesh_typed import TypedAnswer, run_mesh_typed
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


def typed_specs(
    registry: SchemaRegistry, method_schema: dict[str, Any], *, mesh_answers: bool = False
) -> tuple[ToolSpec, ...]:
    """add_/update_/delete_<type> for each allowed node entry with property definitions; with `mesh_answers` (the
    mesh profile), each answers as MemoryMesh does (services.mesh_typed). Their refusals carry MemoryMesh's
    fields in every profile: they are MemoryMesh's tools."""
    specs = []
    for label in registry.all_canonical_labels():
        entry = registry.get_entry(label)
        if entry is None or not generatable(entry):
            continue
        rels = [k for k, t in entry.property_types.items() if t.relationship]
        for mode, text in _TYPED_VERBS.items():
            if mode == "add" and mesh_answers:  # MemoryMesh's add refuses a name that is taken (services.mesh_typed)
                text = "Create a {label}{description}; a name any node holds is refused (update_ changes a node)."
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
                    output_model=_output(mode, mesh_answers),
                    # MERGE, or a relationship replaced by the same one: a repeat changes nothing; unless it
                    # writes relationships, whose weight a repeat averages again (as write_relationship's).
                    annotations=lean_hints(destructive=mode == "delete", idempotent=mode == "delete" or not rels),
                    handler=_typed_handler(entry, mode, mesh_answers),
                    label=label,
                    mesh=True,
                    # The mesh profile lists update_<type> whole, as MemoryMesh does (seed 000, 5.2: add_'s
                    # structure, only the name required); the others refer to add_<type> for its fields.
                    brief=(
                        (
                            f"add_{tool_type_name(label)}",
                            input_schema(request_model(entry, "update", method_schema, beside_add=True)),
                        )
                        if mode == "update" and not mesh_answers
                        else None
                    ),
                )
            )
    return tuple(specs)


def _output(mode: Mode, mesh_answers: bool) -> type[BaseModel]:
    if mesh_answers:
        return NamesAnswer if mode == "delete" else TypedAnswer
    return TypedDeleted if mode == "delete" else TypedWritten


def _typed_handler(entry: SchemaEntry, mode: Mode, mesh_answers: bool) -> Handler:
    run = run_mesh_typed if mesh_answers else run_typed
    return lambda s, req, call: run(entry, mode, req, s.gate, call.agent, call.writer)

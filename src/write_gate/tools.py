"""The tool surfaces: names, descriptions, input/output models, MCP annotations, and the two profiles.

There is no raw Cypher tool in either profile, by design: every write goes through the gate.
"""

import json
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, replace
from typing import Any

import mcp_types as types
from pydantic import BaseModel, ConfigDict

from write_gate.agents import Agent
from write_gate.batch import (
    BatchWritten,
    WriteNodesRequest,
    WriteRelationshipsRequest,
    checked,
    write_nodes,
    write_relationships,
)
from write_gate.gate import Gate
from write_gate.memory import (
    AddObservationsRequest,
    CreateEntitiesRequest,
    CreateRelationsRequest,
    DeleteEntitiesRequest,
    DeleteObservationsRequest,
    DeleteRelationsRequest,
    Done,
    EntitiesCreated,
    MemoryService,
    ObservationsAdded,
    OpenNodesArgs,
    ReadGraphArgs,
    RelationsCreated,
    SearchNodesArgs,
    WriterContext,
)
from write_gate.model import (
    NodeWritten,
    RelationshipWritten,
    SchemaRefreshed,
    WriteNodeRequest,
    WriteRelationshipRequest,
)
from write_gate.reads import GraphResult, OpenNodesRequest, ReadGraphRequest, SearchNodesRequest
from write_gate.registry import SchemaEntry, SchemaRegistry
from write_gate.schema_view import SchemaView
from write_gate.tool_schemas import input_schema, output_schema
from write_gate.typed_tools import (
    TypedDeleted,
    TypedWritten,
    generatable,
    request_model,
    run_typed,
    tool_type_name,
)


class NoArguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class Runtime:
    """What a served gate holds for its tools: the gate, and the memory profile's service."""

    gate: Gate
    memory: MemoryService


@dataclass(frozen=True)
class Call:
    """Per call: the agent (identity and grant), and the memory profile's provenance defaults."""

    agent: Agent
    writer: WriterContext


Handler = Callable[[Runtime, Any, Call], Awaitable[BaseModel]]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str | None  # None: the name says it (generated tools)
    description: str
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    annotations: types.ToolAnnotations
    handler: Handler
    # The text content, where a profile's clients expect something other than the structured result as JSON.
    text: Callable[[BaseModel], str] | None = None
    # The advertised input schema, where input_model's is rendered otherwise (a batch leaves its items undescribed).
    input_schema: dict[str, Any] | None = None
    # The registry label a generated tool writes (typed tools), for WRITE_GATE_TOOLS' `typed:<Label>`.
    label: str | None = None
    # A shorter input schema that refers to this tool's fields (update_npc's to add_npc's), for lists
    # that offer that tool too.
    brief: tuple[str, dict[str, Any]] | None = None
    # Changes the gate's own state rather than the graph (the `admin` group of grants and WRITE_GATE_TOOLS).
    admin: bool = False

    @property
    def group(self) -> str:
        """What grants and WRITE_GATE_TOOLS call it: from its annotations, so the two never disagree."""
        return "admin" if self.admin else "read" if self.annotations.read_only_hint else "write"

    def to_mcp(self, listed: Collection[str] = ()) -> types.Tool:
        """`listed`: the names of the tools offered beside it."""
        schema = self.input_schema or input_schema(self.input_model)
        if self.brief is not None and self.brief[0] in listed:
            schema = self.brief[1]
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=schema,
            output_schema=output_schema(self.output_model),
            annotations=self.annotations,
        )


def _hints(*, read_only: bool = False, destructive: bool = False, idempotent: bool = True) -> types.ToolAnnotations:
    """Every hint stated, none left to its default (the defaults assume a destructive, open-world tool):
    as the official memory server states them, for its drop-in profile."""
    return types.ToolAnnotations(
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,  # the gate's graph is its whole world
    )


def _lean_hints(
    *, read_only: bool = False, destructive: bool = False, idempotent: bool = True
) -> types.ToolAnnotations:
    """The same hints in fewer bytes: a value equal to the specification's default is left out (read-only
    false, destructive true, idempotent false), and so are the two a read-only tool's clients ignore."""
    if read_only:
        return types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
    return types.ToolAnnotations(
        destructive_hint=None if destructive else False,
        idempotent_hint=True if idempotent else None,
        open_world_hint=False,
    )


READ = _lean_hints(read_only=True)


# --- the gate's write tools -----------------------------------------------------------------------

WRITE_NODE = ToolSpec(
    name="write_node",
    title="Write a node",
    description=(
        "Create or update one node: MERGE on merge_keys, then set properties. The label is checked against the "
        "schema registry (drifts such as ':person' are remapped, unknown labels remapped to the fallback or "
        "rejected), required properties are checked, and provenance with a computed confidence is stamped."
    ),
    input_model=WriteNodeRequest,
    output_model=NodeWritten,
    # MERGE never deletes; repeating a call sets the same values again (only last_updated moves).
    annotations=_lean_hints(),
    handler=lambda rt, req, call: rt.gate.write_node(req, call.agent),
)

WRITE_RELATIONSHIP = ToolSpec(
    name="write_relationship",
    title="Write a relationship",
    description=(
        "Create or update one relationship of a registered type between two nodes given by label and keys. "
        "Both must exist, unless endpoint_policy='merge_endpoints' (absent ones are created as _stub). "
        "Stamped like write_node."
    ),
    input_model=WriteRelationshipRequest,
    output_model=RelationshipWritten,
    # Not idempotent: a weight given for an existing relationship is averaged into it, so a repeat moves it.
    annotations=_lean_hints(idempotent=False),
    handler=lambda rt, req, call: rt.gate.write_relationship(req, call.agent),
)

REFRESH_SCHEMA_CACHE = ToolSpec(
    name="refresh_schema_cache",
    title="Reload the schema registry",
    description="Reload the schema registry from the graph's :Schema nodes; generated tools follow it.",
    input_model=NoArguments,
    output_model=SchemaRefreshed,
    # Not read-only: nothing in the graph changes, but the registry in force and the tool list may.
    annotations=_lean_hints(),
    handler=lambda rt, _req, _call: rt.gate.refresh(),
    admin=True,
)

WRITE_NODES = ToolSpec(
    name="write_nodes",
    title="Write nodes",
    description="Many write_node items in one call, each checked on its own; every item's outcome comes back "
    "(written, or rejected with its code) in input order.",
    input_model=WriteNodesRequest,
    output_model=BatchWritten,
    annotations=_lean_hints(),
    handler=lambda rt, req, call: write_nodes(rt.gate, checked(req.items), call.agent),
    # The same model, its items left undescribed: write_node describes them.
    input_schema=input_schema(WriteNodesRequest, description_depth=1),
)

WRITE_RELATIONSHIPS = ToolSpec(
    name="write_relationships",
    title="Write relationships",
    description="Many write_relationship items in one call; every item's outcome, in input order.",
    input_model=WriteRelationshipsRequest,
    output_model=BatchWritten,
    annotations=_lean_hints(idempotent=False),  # weights, as write_relationship
    handler=lambda rt, req, call: write_relationships(rt.gate, checked(req.items), call.agent),
    input_schema=input_schema(WriteRelationshipsRequest, description_depth=1),
)

# --- reads, shared by both profiles ---------------------------------------------------------------

_PAGED = " Paged: pass next_cursor back as cursor."

READ_GRAPH = ToolSpec(
    name="read_graph",
    title="Read Graph",
    description="Read the knowledge graph: {entities, relations, next_cursor}; each entity has name, entityType, "
    "observations, labels and properties (provenance included)." + _PAGED,
    input_model=ReadGraphRequest,
    output_model=GraphResult,
    annotations=READ,
    handler=lambda rt, req, _call: rt.gate.reader.read_graph(req),
)

SEARCH_NODES = ToolSpec(
    name="search_nodes",
    title="Search Nodes",
    description="Entities whose name, type or text contains query (case-insensitive), and the relations "
    "touching them; answers like read_graph." + _PAGED,
    input_model=SearchNodesRequest,
    output_model=GraphResult,
    annotations=READ,
    handler=lambda rt, req, _call: rt.gate.reader.search_nodes(req),
)

OPEN_NODES = ToolSpec(
    name="open_nodes",
    title="Open Nodes",
    description="Entities with exactly these names (case-sensitive), and the relations touching them; answers "
    "like read_graph.",
    input_model=OpenNodesRequest,
    output_model=GraphResult,
    annotations=READ,
    handler=lambda rt, req, _call: rt.gate.reader.open_nodes(req),
)

GET_SCHEMA = ToolSpec(
    name="get_schema",
    title="Get the schema",
    description="The schema registry: node labels (required properties, merge keys, property types, absorbed "
    "drifts), relationship types (endpoint labels), extraction methods and live counts.",
    input_model=NoArguments,
    output_model=SchemaView,
    annotations=READ,
    handler=lambda rt, _req, _call: rt.gate.get_schema(),
)

# --- the official memory server's tools -------------------------------------------------------------


def _json_text(field: str) -> Callable[[BaseModel], str]:
    """The official server answers with the bare JSON array, indented as JSON.stringify(x, null, 2) does;
    the structured result says more."""
    return lambda result: json.dumps(
        [item.model_dump(mode="json", by_alias=True) for item in getattr(result, field)], ensure_ascii=False, indent=2
    )


def _message(result: BaseModel) -> str:
    return result.message  # type: ignore[attr-defined]


# Hints as the official server's, except idempotentHint on the three writes: it says false, but here a name or
# relation that exists is skipped and only new observations are added, so a repeat changes nothing.
CREATE_ENTITIES = ToolSpec(
    name="create_entities",
    title="Create Entities",
    description="Create multiple new entities in the knowledge graph. entityType is checked against the schema "
    "registry (drifted types are remapped); names that exist already are skipped.",
    input_model=CreateEntitiesRequest,
    output_model=EntitiesCreated,
    annotations=_hints(),
    handler=lambda rt, req, call: _second(rt.memory.create_entities(req.entities, call.writer, call.agent)),
    text=_json_text("entities"),
)

CREATE_RELATIONS = ToolSpec(
    name="create_relations",
    title="Create Relations",
    description="Create multiple new relations between entities in the knowledge graph, in active voice. "
    "relationType must be a registered type and both entities must exist.",
    input_model=CreateRelationsRequest,
    output_model=RelationsCreated,
    annotations=_hints(),
    handler=lambda rt, req, call: _second(rt.memory.create_relations(req.relations, call.writer, call.agent)),
    text=_json_text("relations"),
)

ADD_OBSERVATIONS = ToolSpec(
    name="add_observations",
    title="Add Observations",
    description="Add new observations to existing entities in the knowledge graph",
    input_model=AddObservationsRequest,
    output_model=ObservationsAdded,
    annotations=_hints(),
    handler=lambda rt, req, call: rt.memory.add_observations(req.observations, call.agent),
    text=_json_text("results"),
)

DELETE_ENTITIES = ToolSpec(
    name="delete_entities",
    title="Delete Entities",
    description="Delete multiple entities and their associated relations from the knowledge graph",
    input_model=DeleteEntitiesRequest,
    output_model=Done,
    annotations=_hints(destructive=True),
    handler=lambda rt, req, call: rt.memory.delete_entities(req.entityNames, call.agent),
    text=_message,
)

DELETE_OBSERVATIONS = ToolSpec(
    name="delete_observations",
    title="Delete Observations",
    description="Delete specific observations from entities in the knowledge graph",
    input_model=DeleteObservationsRequest,
    output_model=Done,
    annotations=_hints(destructive=True),
    handler=lambda rt, req, call: rt.memory.delete_observations(req.deletions, call.agent),
    text=_message,
)

DELETE_RELATIONS = ToolSpec(
    name="delete_relations",
    title="Delete Relations",
    description="Delete multiple relations from the knowledge graph",
    input_model=DeleteRelationsRequest,
    output_model=Done,
    annotations=_hints(destructive=True),
    handler=lambda rt, req, call: rt.memory.delete_relations(req.relations, call.agent),
    text=_message,
)


# The shared reads, taking their arguments as the official server does (unknown ones ignored).
_OFFICIAL_READ = _hints(read_only=True)
MEMORY_READ_GRAPH = replace(READ_GRAPH, input_model=ReadGraphArgs, annotations=_OFFICIAL_READ)
MEMORY_SEARCH_NODES = replace(SEARCH_NODES, input_model=SearchNodesArgs, annotations=_OFFICIAL_READ)
MEMORY_OPEN_NODES = replace(OPEN_NODES, input_model=OpenNodesArgs, annotations=_OFFICIAL_READ)


async def _second(pair: Awaitable[tuple[Any, BaseModel]]) -> BaseModel:
    return (await pair)[1]


PROFILES: dict[str, tuple[ToolSpec, ...]] = {
    "gate": (
        WRITE_NODE,
        WRITE_RELATIONSHIP,
        WRITE_NODES,
        WRITE_RELATIONSHIPS,
        REFRESH_SCHEMA_CACHE,
        SEARCH_NODES,
        OPEN_NODES,
        READ_GRAPH,
        GET_SCHEMA,
    ),
    # Seed 001's nine tools; read_graph, search_nodes and open_nodes are the same implementation as above.
    "memory": (
        CREATE_ENTITIES,
        CREATE_RELATIONS,
        ADD_OBSERVATIONS,
        DELETE_ENTITIES,
        DELETE_OBSERVATIONS,
        DELETE_RELATIONS,
        MEMORY_READ_GRAPH,
        MEMORY_SEARCH_NODES,
        MEMORY_OPEN_NODES,
    ),
}


# --- typed tools, generated from the registry snapshot -------------------------------------------

_TYPED_VERBS: dict[str, str] = {
    "add": "Create (or update) a {label}{description}.",
    "update": "Set the given fields of an existing {label} (found by {keys}){rels}.",
    "delete": "Delete a {label} and its relationships.",
}


def typed_specs(registry: SchemaRegistry, methods: list[str]) -> tuple[ToolSpec, ...]:
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
                    input_model=request_model(entry, mode, methods),  # type: ignore[arg-type]
                    output_model=TypedDeleted if mode == "delete" else TypedWritten,
                    # MERGE, or a relationship replaced by the same one: a repeat changes nothing; unless it
                    # writes relationships, whose weight a repeat averages again (as write_relationship's).
                    annotations=_lean_hints(destructive=mode == "delete", idempotent=mode == "delete" or not rels),
                    handler=_typed_handler(entry, mode),
                    label=label,
                    brief=(
                        (
                            f"add_{tool_type_name(label)}",
                            input_schema(request_model(entry, "update", methods, beside_add=True)),
                        )
                        if mode == "update"
                        else None
                    ),
                )
            )
    return tuple(specs)


def _typed_handler(entry: SchemaEntry, mode: str) -> Handler:
    return lambda rt, req, call: run_typed(entry, mode, req, rt.gate, call.agent)  # type: ignore[arg-type]

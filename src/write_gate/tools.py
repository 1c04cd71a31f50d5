"""The tool surfaces: names, descriptions, input/output models, MCP annotations, and the two profiles.

There is no raw Cypher tool in either profile, by design: every write goes through the gate.
"""

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from pydantic import BaseModel, ConfigDict

from write_gate.agents import Agent
from write_gate.batch import (
    BatchWritten,
    LooseItems,
    WriteNodesRequest,
    WriteRelationshipsRequest,
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
    RelationsCreated,
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
from write_gate.typed_tools import (
    TypedDeleted,
    TypedWritten,
    generatable,
    input_schema,
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
    description: str
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    annotations: types.ToolAnnotations
    handler: Handler
    # The text content, where a profile's clients expect something other than the structured result as JSON.
    text: Callable[[BaseModel], str] | None = None
    # The advertised input schema, where it says more than input_model (generated tools: enums, required).
    input_schema: dict[str, Any] | None = None

    def to_mcp(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            description=self.description,
            input_schema=self.input_schema or self.input_model.model_json_schema(by_alias=True),
            output_schema=self.output_model.model_json_schema(by_alias=True),
            annotations=self.annotations,
        )


def _annotations(
    title: str, *, read_only: bool, destructive: bool = False, idempotent: bool = True
) -> types.ToolAnnotations:
    return types.ToolAnnotations(
        title=title,
        read_only_hint=read_only,
        destructive_hint=None if read_only else destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


# --- the gate's write tools -----------------------------------------------------------------------

WRITE_NODE = ToolSpec(
    name="write_node",
    description=(
        "Create or update one node, gated by the schema registry. The label is checked (unknown or drifted "
        "labels such as ':person' are remapped to the canonical one, or rejected), required properties are "
        "checked, and source, extraction_method, a computed confidence and the gate version are stamped. "
        "merge_keys identify the node (MERGE); properties are set on it."
    ),
    input_model=WriteNodeRequest,
    output_model=NodeWritten,
    # MERGE never deletes; it may overwrite the values of the properties it is given.
    annotations=_annotations("Write a node", read_only=False),
    handler=lambda rt, req, call: rt.gate.write_node(req, call.agent),
)

WRITE_RELATIONSHIP = ToolSpec(
    name="write_relationship",
    description=(
        "Create or update one relationship of a registered type between two nodes found by their labels and "
        "keys. With endpoint_policy='fail_if_missing' (default) both nodes must exist; 'merge_endpoints' "
        "creates absent ones flagged _stub=true. Provenance and confidence are stamped as on write_node."
    ),
    input_model=WriteRelationshipRequest,
    output_model=RelationshipWritten,
    annotations=_annotations("Write a relationship", read_only=False),
    handler=lambda rt, req, call: rt.gate.write_relationship(req, call.agent),
)

REFRESH_SCHEMA_CACHE = ToolSpec(
    name="refresh_schema_cache",
    description=(
        "Reload the schema registry from the graph's :Schema nodes without restarting. Returns how many "
        "node labels and relationship types are now allowed."
    ),
    input_model=NoArguments,
    output_model=SchemaRefreshed,
    annotations=_annotations("Reload the schema registry", read_only=True),  # changes nothing in the graph
    handler=lambda rt, _req, _call: rt.gate.refresh(),
)

WRITE_NODES = ToolSpec(
    name="write_nodes",
    description="Write many nodes in one call (up to WRITE_GATE_MAX_BATCH_ITEMS): each item is what write_node "
    "takes and is checked and stamped the same way; the valid ones are written (one statement per label) and "
    "the answer lists every item's outcome, written or rejected with its code, in input order.",
    input_model=LooseItems,
    output_model=BatchWritten,
    annotations=_annotations("Write nodes", read_only=False),
    handler=lambda rt, req, call: write_nodes(rt.gate, req.items, call.agent),
    input_schema=WriteNodesRequest.model_json_schema(),
)

WRITE_RELATIONSHIPS = ToolSpec(
    name="write_relationships",
    description="Write many relationships in one call: each item is what write_relationship takes; outcomes per "
    "item, in input order.",
    input_model=LooseItems,
    output_model=BatchWritten,
    annotations=_annotations("Write relationships", read_only=False),
    handler=lambda rt, req, call: write_relationships(rt.gate, req.items, call.agent),
    input_schema=WriteRelationshipsRequest.model_json_schema(),
)

# --- reads, shared by both profiles ---------------------------------------------------------------

_GRAPH_SHAPE = (
    " Returns {entities, relations, next_cursor}: each entity has name, entityType, observations, labels and "
    "its other properties (provenance included); each relation has from, to, relationType and properties."
)

READ_GRAPH = ToolSpec(
    name="read_graph",
    description="Read the knowledge graph, a page at a time (default 100 entities); pass next_cursor back for "
    "the next page. Each relation comes with the page of its start entity." + _GRAPH_SHAPE,
    input_model=ReadGraphRequest,
    output_model=GraphResult,
    annotations=_annotations("Read the graph", read_only=True),
    handler=lambda rt, req, _call: rt.gate.reader.read_graph(req),
)

SEARCH_NODES = ToolSpec(
    name="search_nodes",
    description="Search for nodes whose name, label or any text property contains the query (case-insensitive); "
    "the result also holds their neighbours and the connecting relations. Paged like read_graph." + _GRAPH_SHAPE,
    input_model=SearchNodesRequest,
    output_model=GraphResult,
    annotations=_annotations("Search nodes", read_only=True),
    handler=lambda rt, req, _call: rt.gate.reader.search_nodes(req),
)

OPEN_NODES = ToolSpec(
    name="open_nodes",
    description="Open specific nodes by their exact (case-sensitive) names, with their neighbours and the "
    "connecting relations." + _GRAPH_SHAPE,
    input_model=OpenNodesRequest,
    output_model=GraphResult,
    annotations=_annotations("Open nodes", read_only=True),
    handler=lambda rt, req, _call: rt.gate.reader.open_nodes(req),
)

GET_SCHEMA = ToolSpec(
    name="get_schema",
    description="The schema registry as it is now: node labels (required properties, merge keys, absorbed "
    "drifts, property types, fallback), relationship types (allowed endpoint labels) and live counts.",
    input_model=NoArguments,
    output_model=SchemaView,
    annotations=_annotations("Get the schema", read_only=True),
    handler=lambda rt, _req, _call: rt.gate.get_schema(),
)

# --- the official memory server's tools -------------------------------------------------------------


def _json_text(field: str) -> Callable[[BaseModel], str]:
    """The official server answers with the bare JSON array; the structured result says more."""
    return lambda result: json.dumps(
        [item.model_dump(mode="json", by_alias=True) for item in getattr(result, field)], ensure_ascii=False
    )


def _message(result: BaseModel) -> str:
    return result.message  # type: ignore[attr-defined]


CREATE_ENTITIES = ToolSpec(
    name="create_entities",
    description="Create multiple new entities in the knowledge graph. entityType is checked against the schema "
    "registry (drifted types are remapped to the canonical one); names that exist already are skipped.",
    input_model=CreateEntitiesRequest,
    output_model=EntitiesCreated,
    annotations=_annotations("Create entities", read_only=False),
    handler=lambda rt, req, call: _second(rt.memory.create_entities(req.entities, call.writer, call.agent)),
    text=_json_text("created"),
)

CREATE_RELATIONS = ToolSpec(
    name="create_relations",
    description="Create multiple new relations between entities in the knowledge graph. Relations are directed "
    "edges, in active voice; relationType must be a registered type and both entities must exist.",
    input_model=CreateRelationsRequest,
    output_model=RelationsCreated,
    annotations=_annotations("Create relations", read_only=False),
    handler=lambda rt, req, call: _second(rt.memory.create_relations(req.relations, call.writer, call.agent)),
    text=_json_text("created"),
)

ADD_OBSERVATIONS = ToolSpec(
    name="add_observations",
    description="Add new observations to existing entities in the knowledge graph",
    input_model=AddObservationsRequest,
    output_model=ObservationsAdded,
    annotations=_annotations("Add observations", read_only=False),
    handler=lambda rt, req, call: rt.memory.add_observations(req.observations, call.agent),
    text=_json_text("results"),
)

DELETE_ENTITIES = ToolSpec(
    name="delete_entities",
    description="Delete multiple entities and their associated relations from the knowledge graph",
    input_model=DeleteEntitiesRequest,
    output_model=Done,
    annotations=_annotations("Delete entities", read_only=False, destructive=True),
    handler=lambda rt, req, call: rt.memory.delete_entities(req.entityNames, call.agent),
    text=_message,
)

DELETE_OBSERVATIONS = ToolSpec(
    name="delete_observations",
    description="Delete specific observations from entities in the knowledge graph",
    input_model=DeleteObservationsRequest,
    output_model=Done,
    annotations=_annotations("Delete observations", read_only=False, destructive=True),
    handler=lambda rt, req, call: rt.memory.delete_observations(req.deletions, call.agent),
    text=_message,
)

DELETE_RELATIONS = ToolSpec(
    name="delete_relations",
    description="Delete multiple relations from the knowledge graph",
    input_model=DeleteRelationsRequest,
    output_model=Done,
    annotations=_annotations("Delete relations", read_only=False, destructive=True),
    handler=lambda rt, req, call: rt.memory.delete_relations(req.relations, call.agent),
    text=_message,
)


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
        READ_GRAPH,
        SEARCH_NODES,
        OPEN_NODES,
    ),
}


# --- typed tools, generated from the registry snapshot -------------------------------------------

_TYPED_VERBS: dict[str, tuple[str, str]] = {
    "add": ("Add a {label}", "Create (or update) a {label}: {description}"),
    "update": ("Update a {label}", "Update a {label}'s given fields (only its {keys} is required){rels}."),
    "delete": ("Delete a {label}", "Delete a {label} and its relationships."),
}


def typed_specs(registry: SchemaRegistry, methods: list[str]) -> tuple[ToolSpec, ...]:
    """add_/update_/delete_<type> for each allowed node entry with property definitions."""
    specs = []
    for label in registry.all_canonical_labels():
        entry = registry.get_entry(label)
        if entry is None or not generatable(entry):
            continue
        rels = [k for k, t in entry.property_types.items() if t.relationship]
        for mode, (title, text) in _TYPED_VERBS.items():
            description = (
                text.format(
                    label=label,
                    description=entry.description or "fields as the schema lists them",
                    keys=", ".join(entry.merge_keys),
                    rels=f"; a new {', '.join(rels)} replaces the old relationship" if rels else "",
                )
                + " Checked and stamped by the gate like write_node."
            )
            specs.append(
                ToolSpec(
                    name=f"{mode}_{tool_type_name(label)}",
                    description=description,
                    input_model=request_model(entry, mode),  # type: ignore[arg-type]
                    output_model=TypedDeleted if mode == "delete" else TypedWritten,
                    annotations=_annotations(title.format(label=label), read_only=False, destructive=mode == "delete"),
                    handler=_typed_handler(entry, mode),
                    input_schema=input_schema(entry, mode, methods),  # type: ignore[arg-type]
                )
            )
    return tuple(specs)


def _typed_handler(entry: SchemaEntry, mode: str) -> Handler:
    return lambda rt, req, call: run_typed(entry, mode, req, rt.gate, call.agent)  # type: ignore[arg-type]

"""The official memory server's tools (seed 001), under its names, arguments and answers."""

import json
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from pydantic import BaseModel

from write_gate.services.memory import (
    AddObservationsRequest,
    CreateEntitiesRequest,
    CreateRelationsRequest,
    DeleteEntitiesRequest,
    DeleteObservationsRequest,
    DeleteRelationsRequest,
    Done,
    EntitiesCreated,
    ObservationsAdded,
    OpenNodesArgs,
    ReadGraphArgs,
    RelationsCreated,
    SearchNodesArgs,
)
from write_gate.surface.gate_tools import OPEN_NODES, READ_GRAPH, SEARCH_NODES
from write_gate.surface.tool_spec import ToolSpec, hints


def _json_text(field: str) -> Callable[[BaseModel], str]:
    """The official server answers with the bare JSON array, indented as JSON.stringify(x, null, 2) does;
    the structured result says more."""
    return lambda result: json.dumps(
        [item.model_dump(mode="json", by_alias=True) for item in getattr(result, field)], ensure_ascii=False, indent=2
    )


def _message(result: Done) -> str:
    return result.message


# Hints as the official server's, except idempotentHint on the three writes: it says false, but here a name or
# relation that exists is skipped and only new observations are added, so a repeat changes nothing.
CREATE_ENTITIES = ToolSpec(
    name="create_entities",
    title="Create Entities",
    description="Create multiple new entities in the knowledge graph. entityType is checked against the schema "
    "registry (drifted types are remapped); names that exist already are skipped.",
    input_model=CreateEntitiesRequest,
    output_model=EntitiesCreated,
    annotations=hints(),
    handler=lambda s, req, call: _second(s.memory.create_entities(req.entities, call.writer, call.agent)),
    text=_json_text("entities"),
)


CREATE_RELATIONS = ToolSpec(
    name="create_relations",
    title="Create Relations",
    description="Create multiple new relations between entities in the knowledge graph, in active voice. "
    "relationType must be a registered type and both entities must exist.",
    input_model=CreateRelationsRequest,
    output_model=RelationsCreated,
    annotations=hints(),
    handler=lambda s, req, call: _second(s.memory.create_relations(req.relations, call.writer, call.agent)),
    text=_json_text("relations"),
)


ADD_OBSERVATIONS = ToolSpec(
    name="add_observations",
    title="Add Observations",
    description="Add new observations to existing entities in the knowledge graph",
    input_model=AddObservationsRequest,
    output_model=ObservationsAdded,
    annotations=hints(),
    handler=lambda s, req, call: s.memory.add_observations(req.observations, call.writer, call.agent),
    text=_json_text("results"),
)


DELETE_ENTITIES = ToolSpec(
    name="delete_entities",
    title="Delete Entities",
    description="Delete multiple entities and their associated relations from the knowledge graph",
    input_model=DeleteEntitiesRequest,
    output_model=Done,
    annotations=hints(destructive=True),
    handler=lambda s, req, call: s.memory.delete_entities(req.entityNames, call.agent),
    text=_message,
)


DELETE_OBSERVATIONS = ToolSpec(
    name="delete_observations",
    title="Delete Observations",
    description="Delete specific observations from entities in the knowledge graph",
    input_model=DeleteObservationsRequest,
    output_model=Done,
    annotations=hints(destructive=True),
    handler=lambda s, req, call: s.memory.delete_observations(req.deletions, call.writer, call.agent),
    text=_message,
)


DELETE_RELATIONS = ToolSpec(
    name="delete_relations",
    title="Delete Relations",
    description="Delete multiple relations from the knowledge graph",
    input_model=DeleteRelationsRequest,
    output_model=Done,
    annotations=hints(destructive=True),
    handler=lambda s, req, call: s.memory.delete_relations(req.relations, call.agent),
    text=_message,
)


# The shared reads, taking their arguments as the official server does (unknown ones ignored), their text indented
# as the official server's (JSON.stringify(graph, null, 2)).
_OFFICIAL_READ = hints(read_only=True)


# memory-mcp's entity carries its parent's name (`parentId`) where it has one: one more read a page, no more.
MEMORY_READ_GRAPH = replace(
    READ_GRAPH,
    input_model=ReadGraphArgs,
    indented=True,
    annotations=_OFFICIAL_READ,
    handler=lambda s, req, _call: s.gate.reader.read_graph(req, parent_type=s.hierarchy.type_),
)


# The official answers: the matches and the relations touching them (neighbors: true adds MemoryMesh's neighbours).
MEMORY_SEARCH_NODES = replace(
    SEARCH_NODES,
    description="Entities whose name, type or text contains query (case-insensitive), and the relations touching "
    "them; answers like read_graph. Paged: pass next_cursor back as cursor.",
    input_model=SearchNodesArgs,
    indented=True,
    annotations=_OFFICIAL_READ,
    handler=lambda s, req, _call: s.gate.reader.search_nodes(req, parent_type=s.hierarchy.type_),
)


MEMORY_OPEN_NODES = replace(
    OPEN_NODES,
    description="Entities with exactly these names (case-sensitive), and the relations touching them; answers like "
    "read_graph.",
    input_model=OpenNodesArgs,
    indented=True,
    annotations=_OFFICIAL_READ,
    handler=lambda s, req, _call: s.gate.reader.open_nodes(req, parent_type=s.hierarchy.type_),
)


async def _second(pair: Awaitable[tuple[Any, BaseModel]]) -> BaseModel:
    return (await pair)[1]

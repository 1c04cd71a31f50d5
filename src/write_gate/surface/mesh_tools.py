"""MemoryMesh's static graph tools (seed 000, section 6), under its names and arguments: the eight writes, offered in
every profile in the `mesh` toolset, and the three reads as the mesh profile answers them (the gate profile's reads,
neighbours included, in MemoryMesh's `{data: {nodes, edges}}`)."""

from dataclasses import replace

from write_gate.services.mesh import (
    AddEdgesRequest,
    AddNodesRequest,
    DeleteEdgesRequest,
    DeleteNodesRequest,
    EdgesAnswer,
    MeshService,
    MetadataAnswer,
    MetadataRequest,
    NamesAnswer,
    NodesAnswer,
    UpdateEdgesRequest,
    UpdateNodesRequest,
)
from write_gate.services.mesh_reads import GraphAnswer, MeshReads
from write_gate.surface.gate_tools import OPEN_NODES, READ_GRAPH, SEARCH_NODES
from write_gate.surface.tool_spec import Services, ToolSpec, lean_hints


def _mesh(services: Services) -> MeshService:
    return MeshService(services.memory)


ADD_NODES = ToolSpec(
    name="add_nodes",
    title="Add nodes",
    description="Add nodes {name, nodeType, metadata: ['Key: Value', ...]}; nodeType is checked against the schema "
    "registry (drifted types are remapped). A name that exists refuses the call (ALREADY_EXISTS).",
    input_model=AddNodesRequest,
    output_model=NodesAnswer,
    annotations=lean_hints(idempotent=False),
    handler=lambda s, req, call: _mesh(s).add_nodes(req.nodes, call.writer, call.agent),
    mesh=True,
)


UPDATE_NODES = ToolSpec(
    name="update_nodes",
    title="Update nodes",
    description="Replace the metadata of existing nodes, by name (ENTITY_NOT_FOUND if one is missing).",
    input_model=UpdateNodesRequest,
    output_model=NodesAnswer,
    annotations=lean_hints(destructive=True),  # the metadata replaced
    handler=lambda s, req, call: _mesh(s).update_nodes(req.nodes, call.writer, call.agent),
    mesh=True,
)


DELETE_NODES = ToolSpec(
    name="delete_nodes",
    title="Delete nodes",
    description="Delete nodes by name, with every edge from or to them.",
    input_model=DeleteNodesRequest,
    output_model=NamesAnswer,
    annotations=lean_hints(destructive=True),
    handler=lambda s, req, call: _mesh(s).delete_nodes(req.nodeNames, call.agent),
    mesh=True,
)


ADD_EDGES = ToolSpec(
    name="add_edges",
    title="Add edges",
    description="Add edges {from, to, edgeType, weight?} between existing nodes; edgeType must be a registered "
    "type, weight in [0, 1] (1.0 if not given). An edge that exists refuses the call (ALREADY_EXISTS).",
    input_model=AddEdgesRequest,
    output_model=EdgesAnswer,
    annotations=lean_hints(idempotent=False),
    handler=lambda s, req, call: _mesh(s).add_edges(req.edges, call.writer, call.agent),
    mesh=True,
)


UPDATE_EDGES = ToolSpec(
    name="update_edges",
    title="Update edges",
    description="Average a new weight into existing edges: (current + new) / 2 (RELATION_NOT_FOUND if one is "
    "missing). Answers each edge's weight after.",
    input_model=UpdateEdgesRequest,
    output_model=EdgesAnswer,
    annotations=lean_hints(idempotent=False),
    handler=lambda s, req, call: _mesh(s).update_edges(req.edges, call.writer, call.agent),
    mesh=True,
)


DELETE_EDGES = ToolSpec(
    name="delete_edges",
    title="Delete edges",
    description="Delete edges matching {from, to, edgeType} exactly.",
    input_model=DeleteEdgesRequest,
    output_model=EdgesAnswer,
    annotations=lean_hints(destructive=True),
    handler=lambda s, req, call: _mesh(s).delete_edges(req.edges, call.agent),
    mesh=True,
)


ADD_METADATA = ToolSpec(
    name="add_metadata",
    title="Add metadata",
    description="Append metadata entries to a node (entries it has already are skipped); answers those added.",
    input_model=MetadataRequest,
    output_model=MetadataAnswer,
    annotations=lean_hints(),
    handler=lambda s, req, call: _mesh(s).add_metadata(req, call.writer, call.agent),
    mesh=True,
)


DELETE_METADATA = ToolSpec(
    name="delete_metadata",
    title="Delete metadata",
    description="Remove metadata entries (exact matches) from a node.",
    input_model=MetadataRequest,
    output_model=MetadataAnswer,
    annotations=lean_hints(destructive=True),
    handler=lambda s, req, call: _mesh(s).delete_metadata(req, call.writer, call.agent),
    mesh=True,
)


MESH_TOOLS = (
    ADD_NODES,
    UPDATE_NODES,
    DELETE_NODES,
    ADD_EDGES,
    UPDATE_EDGES,
    DELETE_EDGES,
    ADD_METADATA,
    DELETE_METADATA,
)


# The mesh profile's reads: the gate profile's, answered as MemoryMesh answers.
_SHAPE = " Answers {data: {nodes: [{name, nodeType, metadata}], edges: [{from, to, edgeType, weight}]}, next_cursor}."

MESH_READ_GRAPH = replace(
    READ_GRAPH,
    description="Read the knowledge graph, a page at a time (pass next_cursor back as cursor)." + _SHAPE,
    output_model=GraphAnswer,
    handler=lambda s, req, _call: MeshReads(s.gate).read_graph(req),
    mesh=True,
)

MESH_SEARCH_NODES = replace(
    SEARCH_NODES,
    description="Nodes whose name, type or metadata contains query (case-insensitive), with their neighbours and "
    "the edges touching them." + _SHAPE,
    output_model=GraphAnswer,
    handler=lambda s, req, _call: MeshReads(s.gate).search_nodes(req),
    mesh=True,
)

MESH_OPEN_NODES = replace(
    OPEN_NODES,
    description="Nodes with exactly these names (case-sensitive), with their neighbours and the edges touching "
    "them." + _SHAPE,
    output_model=GraphAnswer,
    handler=lambda s, req, _call: MeshReads(s.gate).open_nodes(req),
    mesh=True,
)

"""MemoryMesh's reads (seed 000, section 6.3): the gate profile's read_graph, search_nodes and open_nodes, answered
as MemoryMesh answers them, `{data: {nodes, edges}, actionTaken, timestamp}`, for the mesh profile.

The reads are the gate's own (pages, neighbours, the archive, grants), only the answer is MemoryMesh's: an
entity is a node `{name, nodeType, metadata}` whose metadata holds its observations and, as MemoryMesh keeps
them, its declared fields as "Key: Value" entries (a relationship field from the node's own edges in the answer);
a relation is an edge `{from, to, edgeType, weight}`; types in MemoryMesh's spelling (services.mesh). A page's
`next_cursor` sits beside `data`, as in the gate's answer.
"""

from pydantic import BaseModel, Field

from write_gate.core.clock import utc_now
from write_gate.core.registry import SchemaRegistry
from write_gate.services.gate import Gate
from write_gate.services.mesh import Edge, MeshAnswer, Node, mesh_node, own_links
from write_gate.services.reads import (
    GraphResult,
    NeighbourOpenRequest,
    NeighbourSearchRequest,
    ReadGraphRequest,
    Relation,
    weight_of,
)


class GraphData(BaseModel):
    nodes: list[Node]
    edges: list[Edge]


class GraphAnswer(MeshAnswer):
    data: GraphData
    next_cursor: str | None = Field(default=None, description="Pass back as cursor for the next page; null at the end.")


def mesh_edge(relation: Relation) -> Edge:
    weight = weight_of(relation.properties)
    return Edge(from_=relation.from_, to=relation.to, edgeType=relation.relationType, weight=weight)


def mesh_graph(result: GraphResult, registry: SchemaRegistry) -> GraphData:
    links = own_links(result.relations)
    nodes = [
        mesh_node(entity, registry, links.get(entity.name, {}) if entity.name is not None else {})
        for entity in result.entities
    ]
    return GraphData(nodes=nodes, edges=[mesh_edge(relation) for relation in result.relations])


class MeshReads:
    def __init__(self, gate: Gate) -> None:
        self.gate = gate

    def _answer(self, result: GraphResult, action: str) -> GraphAnswer:
        data = mesh_graph(result, self.gate.registry)
        return GraphAnswer(data=data, actionTaken=action, timestamp=utc_now(), next_cursor=result.next_cursor)

    async def read_graph(self, request: ReadGraphRequest) -> GraphAnswer:
        return self._answer(await self.gate.reader.read_graph(request), "Read graph")

    async def search_nodes(self, request: NeighbourSearchRequest) -> GraphAnswer:
        return self._answer(await self.gate.reader.search_nodes(request), f"Searched nodes: {request.query}")

    async def open_nodes(self, request: NeighbourOpenRequest) -> GraphAnswer:
        return self._answer(await self.gate.reader.open_nodes(request), f"Opened nodes: {', '.join(request.names)}")

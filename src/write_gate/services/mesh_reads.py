"""MemoryMesh's reads (seed 000, section 6.3): the gate profile's read_graph, search_nodes and open_nodes, answered
as MemoryMesh answers them, `{data: {nodes, edges}, actionTaken, timestamp}`, for the mesh profile.

The reads are the gate's own (pages, neighbours, the archive, grants), only the answer is MemoryMesh's: an
entity is a node `{name, nodeType, metadata}` whose metadata holds its observations and, as MemoryMesh keeps
them, its declared fields as "Key: Value" entries (a relationship field from the node's own edges in the answer);
a relation is an edge `{from, to, edgeType, weight}`; types in MemoryMesh's spelling (services.mesh). A page's
`next_cursor` sits beside `data`, as in the gate's answer. A search matches the "Key: Value" entries the answer
shows, as MemoryMesh matches its metadata (`search_nodes`, below).
"""

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from write_gate.core.clock import utc_now
from write_gate.core.identity import fold
from write_gate.core.metadata import entry_search_value, shows_query
from write_gate.core.registry import SchemaRegistry
from write_gate.services.gate import Gate
from write_gate.services.mesh import Edge, MeshAnswer, Node, mesh_node, own_links
from write_gate.services.reads import (
    DEFAULT_RELATIONS_LIMIT,
    Entity,
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
        action = f"Searched nodes: {request.query}"
        query = fold(request.query)
        value = entry_search_value(query)
        if value is None:
            return self._answer(await self.gate.reader.search_nodes(request), action)
        # "Role: Wizard": MemoryMesh matches its metadata entries, which a typed tool's node shows from its fields
        # (with_declared_fields) but whose text the graph does not hold. The candidates are the nodes holding the
        # part after the separator, a page of them, and their neighbours (a relationship field's entry, "Current
        # Location: Rivendell", shows a node beside the one holding "rivendell"); those whose answer shows the
        # query are kept (a page may hold fewer nodes than its limit, and `next_cursor` says more candidates follow).
        reader = self.gate.reader
        candidates, next_cursor = await reader.search_page(request.model_copy(update={"query": value}))
        read = await reader.expand(
            candidates,
            DEFAULT_RELATIONS_LIMIT,
            outgoing_only=False,
            include_archived=request.includeArchived,
            neighbours=True,
            neighbour_filter=request.entity_filter(),
        )
        links = own_links(read.result.relations)
        kept = [
            node_id
            for node_id, entity in zip((*read.ids, *read.neighbour_ids), read.result.entities, strict=True)
            if self._shows(query, entity, links.get(entity.name, {}) if entity.name is not None else {})
        ]
        return self._answer(await reader.search_answer(request, kept, next_cursor), action)

    def _shows(self, query: str, entity: Entity, links: Mapping[str, Sequence[str]]) -> bool:
        node = mesh_node(entity, self.gate.registry, links)
        return shows_query(query, node.name, node.nodeType, node.metadata, entity.properties)

    async def open_nodes(self, request: NeighbourOpenRequest) -> GraphAnswer:
        return self._answer(await self.gate.reader.open_nodes(request), f"Opened nodes: {', '.join(request.names)}")

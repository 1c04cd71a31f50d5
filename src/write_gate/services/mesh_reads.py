"""MemoryMesh's reads (seed 000, section 6.3): the gate profile's read_graph, search_nodes and open_nodes, answered
as MemoryMesh answers them, `{data: {nodes, edges}, actionTaken, timestamp}`, for the mesh profile.

The reads are the gate's own (pages, neighbours, the archive, grants), only the answer is MemoryMesh's: an
entity is a node `{name, nodeType, metadata}` whose metadata holds its observations and, as MemoryMesh keeps
them, its declared fields as "Key: Value" entries (a relationship field from the node's own edges in the answer);
a relation is an edge `{from, to, edgeType, weight}`; types in MemoryMesh's spelling (services.mesh). A page's
`next_cursor` sits beside `data`, as in the gate's answer. A search matches the "Key: Value" entries the answer
shows, as MemoryMesh matches its metadata (`search_nodes`, below).
"""

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from write_gate.core.clock import utc_now
from write_gate.core.identity import FOLD_PREFIX, fold
from write_gate.core.knowledge import IMPORTANCE, TAGS, EntityFilter
from write_gate.core.metadata import entry_search_value, names_a_key, shows_query
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
from write_gate.services.typed_tools import tool_type_name


class GraphData(BaseModel):
    nodes: list[Node]
    edges: list[Edge]


class GraphAnswer(MeshAnswer):
    data: GraphData
    next_cursor: str | None = Field(default=None, description="Pass back as cursor for the next page; null at the end.")


def mesh_edge(relation: Relation) -> Edge:
    weight = weight_of(relation.properties)
    return Edge(from_=relation.from_, to=relation.to, edgeType=relation.relationType, weight=weight)


def mesh_graph(
    result: GraphResult, registry: SchemaRegistry, links: Mapping[str, Mapping[str, Sequence[str]]] | None = None
) -> GraphData:
    """`links`: each node's own edges by type (`own_links`), those of the answer's relations where not given."""
    links = own_links(result.relations) if links is None else links
    nodes = [
        mesh_node(entity, registry, links.get(entity.name, {}) if entity.name is not None else {})
        for entity in result.entities
    ]
    return GraphData(nodes=nodes, edges=[mesh_edge(relation) for relation in result.relations])


class MeshReads:
    def __init__(self, gate: Gate) -> None:
        self.gate = gate

    def _answer(
        self, result: GraphResult, action: str, links: Mapping[str, Mapping[str, Sequence[str]]] | None = None
    ) -> GraphAnswer:
        data = mesh_graph(result, self.gate.registry, links)
        return GraphAnswer(data=data, actionTaken=action, timestamp=utc_now(), next_cursor=result.next_cursor)

    async def _with_own_links(self, result: GraphResult, action: str, include_archived: bool) -> GraphAnswer:
        """An answer with neighbours, whose relationship fields come from each node's own edges, read for it: the
        answer holds a neighbour's edge to the node asked for, not its others (open_nodes ["A"] answers A -> B,
        not B -> C), so B would show [] beside A where it shows "Parent Location: C" when read itself."""
        registry, reader = self.gate.registry, self.gate.reader
        fielded = {
            (entity.name, entity.entityType)
            for entity in result.entities
            if entity.name is not None
            and (entry := registry.get_entry(entity.entityType)) is not None
            and any(spec.relationship is not None for spec in entry.property_types.values())
        }
        if not fielded:
            return self._answer(result, action)
        found = await reader.find_by_names(name for name, _label in fielded)
        ids = sorted(
            {i for name, hits in found.items() for i, labels in hits if any((name, x) in fielded for x in labels)}
        )
        own = await reader.expand(ids, DEFAULT_RELATIONS_LIMIT, outgoing_only=True, include_archived=include_archived)
        links = own_links(result.relations)
        links.update(own_links(own.result.relations))
        return self._answer(result, action, links)

    async def read_graph(self, request: ReadGraphRequest) -> GraphAnswer:
        # Every node's own edges are in the answer (outgoing, up to the relations limit): no neighbour is.
        return self._answer(await self.gate.reader.read_graph(request), "Read graph")

    async def search_nodes(self, request: NeighbourSearchRequest) -> GraphAnswer:
        """MemoryMesh's search (seed 000, 4.5): the query a substring of a node's name, type or one of its metadata
        entries, which a typed tool's node shows from its fields (with_declared_fields) though the graph holds no
        such text. A query across an entry's separator ("le: wiz") and one within an entry's key ("status") are
        each read their own way; any other is the gate's substring search. Of each, only the nodes whose answer
        shows the query are kept."""
        action = f"Searched nodes: {request.query}"
        query = fold(request.query)
        reader = self.gate.reader
        labels = reader.labels_to_read(request.labels)
        if (value := entry_search_value(query)) is not None:
            page, next_cursor = await self._across_separator(request, query, value, labels)
        elif query and (keyed := self._keyed(query, labels)):
            page, next_cursor = await self._within_keys(request, query, labels, keyed)
        else:
            page, next_cursor = await reader.search_page(request)
            # The gate's search reads every stored text: an entry as written whose field now holds another value
            # ("Traits: brave" after update_npc {traits: []}), tags. What the answer does not show is no match.
            shown = {node_id for node_id, _label in await self._showing(request, query, page)}
            page = [node_id for node_id in page if node_id in shown]
        answer = await reader.search_answer(request, page, next_cursor)
        return await self._with_own_links(answer, action, request.includeArchived)

    async def _across_separator(
        self, request: NeighbourSearchRequest, query: str, value: str, labels: list[str]
    ) -> tuple[list[int], str | None]:
        """The candidates are a page of the nodes holding the part after the separator, and their neighbours (a
        relationship field's entry, "Current Location: Rivendell", shows a node beside the one holding
        "rivendell"); those that show the query are kept (a page may hold fewer nodes than its limit, and the
        cursor says more candidates follow)."""
        reader = self.gate.reader
        # Candidates of every label and unfiltered: the node holding "rivendell" may be of a type the search leaves
        # out, or lack the tags it asks for, while the one beside it, which shows the entry, has them.
        unfiltered = {"query": value, "labels": None, "tags": None, "minImportance": None, "maxImportance": None}
        candidates, next_cursor = await reader.search_page(
            request.model_copy(update={**unfiltered, "provenance": None})
        )
        wanted = request.entity_filter()
        shown = await self._showing(request, query, candidates, neighbours=True, keep=wanted)
        # What is kept is a match, so it must pass what the search filters (a filtered search answers only what
        # passes): its labels, its tags and importance (`keep`; a neighbour's expansion applied them too), and the
        # claims asked for.
        passing = set(await reader.with_matching_claims(sorted({i for i, _label in shown}), request.provenance))
        asked = set(labels)
        return [i for i, label in shown if label in asked and i in passing], next_cursor

    def _keyed(self, query: str, labels: list[str]) -> set[str]:
        """The labels whose nodes show the query by their type alone: one of its fields' entries holds it within
        its key ("status", "us: "), or the nodeType its typed tools write does ("player_character", "r_c": the graph
        holds the label, PlayerCharacter, whose text the gate's search reads)."""
        registry = self.gate.registry
        return {
            label
            for label in labels
            if (entry := registry.get_entry(label))
            and (names_a_key(entry, query) or (entry.typed_tools and query in fold(tool_type_name(label))))
        }

    async def _within_keys(
        self, request: NeighbourSearchRequest, query: str, labels: list[str], keyed: set[str]
    ) -> tuple[list[int], str | None]:
        """A page across the labels in their order, as the gate's search pages them: a keyed label's every node
        read (those that show the query kept: every one that holds the field), the others searched; one cursor
        leads through both."""
        reader = self.gate.reader
        runs = [(whole, list(run)) for whole, run in itertools.groupby(labels, key=keyed.__contains__)]
        remaining, found, next_cursor = request.limit, [], None
        for i, (whole, run) in enumerate(runs):
            asked = request.model_copy(update={"labels": run, "limit": remaining})
            ids, after = await reader.search_page(asked, whole=whole)
            found += [(node_id, whole) for node_id in ids]
            remaining -= len(ids)
            if after is not None or remaining == 0:
                following = after is None and i + 1 < len(runs)
                next_cursor = reader.page_start(runs[i + 1][1][0]) if following else after
                break
        shown = {node_id for node_id, _label in await self._showing(request, query, [i for i, whole in found if whole])}
        return [node_id for node_id, whole in found if not whole or node_id in shown], next_cursor

    async def _showing(
        self,
        request: NeighbourSearchRequest,
        query: str,
        ids: list[int],
        *,
        neighbours: bool = False,
        keep: EntityFilter | None = None,
    ) -> list[tuple[int, str]]:
        """Of the nodes `ids` (and, with `neighbours`, the nodes beside them), those whose answer shows the query
        (and that `keep` admits), each with its label."""
        read = await self.gate.reader.expand(
            ids,
            DEFAULT_RELATIONS_LIMIT,
            outgoing_only=False,
            include_archived=request.includeArchived,
            neighbours=neighbours,
            neighbour_filter=request.entity_filter(),
        )
        links = own_links(read.result.relations)
        return [
            (node_id, entity.entityType)
            for node_id, entity in zip((*read.ids, *read.neighbour_ids), read.result.entities, strict=True)
            if self._shows(query, entity, links.get(entity.name, {}) if entity.name is not None else {})
            and (keep is None or not keep.active or keep.admits(_knowledge(entity)))
        ]

    def _shows(self, query: str, entity: Entity, links: Mapping[str, Sequence[str]]) -> bool:
        node = mesh_node(entity, self.gate.registry, links)
        return shows_query(query, node.name, node.nodeType, node.metadata)

    async def open_nodes(self, request: NeighbourOpenRequest) -> GraphAnswer:
        opened = await self.gate.reader.open_nodes(request)
        return await self._with_own_links(opened, f"Opened nodes: {', '.join(request.names)}", request.includeArchived)


def _knowledge(entity: Entity) -> dict[str, Any]:
    """An entity's tags and importance as `EntityFilter.admits` reads them from a node's stored properties."""
    tags = [fold(tag) for tag in entity.tags] if entity.tags is not None else None
    return {FOLD_PREFIX + TAGS: tags, IMPORTANCE: entity.importance}

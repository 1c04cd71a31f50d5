"""MemoryMesh's static graph tools (seed 000, section 6): add, update and delete nodes and edges, add and delete
metadata, with MemoryMesh's names, arguments and checks, and every write put through the gate.

A node's `nodeType` is its label, resolved by the registry as the memory profile's `entityType` is (`npc` →
`Npc`, anything unknown → the fallback); its `metadata` ("Key: Value" strings) is its observations list, the
same strings the official memory server's agents write, so every profile reads one graph. An edge's `edgeType`
is a registered relationship type; its `weight` is the gate's relationship weight (1.0 when new, averaged in
after). Names are unique across labels for `add_nodes`, as in MemoryMesh; where the gate profile holds a name
under several labels, a call naming it is refused until the typed tools or `write_relationship` pick one.
"""

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import AfterValidator, AliasChoices, BaseModel, ConfigDict, Field

from write_gate.access.agents import Agent
from write_gate.core.clock import utc_now
from write_gate.core.cypher.records import relationship_properties
from write_gate.core.cypher.statement import Statement
from write_gate.core.decisions import resolve_label, resolve_relationship_type
from write_gate.core.identifiers import REMAP_FIELD
from write_gate.core.knowledge import OBSERVATIONS
from write_gate.core.metadata import (
    deleted_fields,
    dropped_fields,
    key_fold,
    metadata_properties,
    parse_entry,
    with_declared_fields,
)
from write_gate.core.model import ErrorCode, GateRejection, WriteRelationshipRequest
from write_gate.core.model import Weight as GateWeight
from write_gate.core.properties import name_fold
from write_gate.core.registry import SchemaRegistry
from write_gate.services.entities import Located, locate_all
from write_gate.services.entity_updates import update_entity
from write_gate.services.gate import Gate, read_to_write
from write_gate.services.memory import (
    MEMORY_PROPERTIES,
    EntityIn,
    MemoryService,
    ObservationIn,
    RelationIn,
    WriterContext,
)
from write_gate.services.reads import Entity, OpenNodesRequest, Relation, Text, weight_of
from write_gate.services.typed_tools import tool_type_name


class _In(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True, serialize_by_alias=True)


Name = Annotated[Text, Field(min_length=1)]
Metadata = Annotated[list[Text], Field(description='"Key: Value" strings, e.g. "Role: Wizard".')]
Weight = Annotated[GateWeight, Field(description="Strength in [0, 1].")]


class NodeIn(_In):
    name: Name
    nodeType: Annotated[Text, Field(min_length=1, description="The node's type, e.g. 'npc'.")]  # noqa: N815
    metadata: Metadata = Field(default_factory=list)


class NodeUpdateIn(_In):
    name: Name
    metadata: Annotated[list[Text] | None, Field(description="Replaces the node's metadata.")] = None
    nodeType: Annotated[Text | None, Field(description="Its type, which must stay the same.")] = None  # noqa: N815


class EdgeRef(_In):
    from_: Annotated[Text, Field(min_length=1, alias="from")]  # the nodes' names
    to: Annotated[Text, Field(min_length=1)]
    edgeType: Annotated[Text, Field(min_length=1, description="The edge's type, e.g. 'located_in'.")]  # noqa: N815


class EdgeIn(EdgeRef):
    weight: Annotated[Weight | None, Field(description="1.0 when not given.")] = None


class EdgeUpdateIn(EdgeRef):
    weight: Annotated[
        Weight | None,
        Field(
            validation_alias=AliasChoices("weight", "newWeight"),
            description="Averaged with the current weight: (current + new) / 2.",
        ),
    ] = None


class AddNodesRequest(_In):
    nodes: list[NodeIn]


class UpdateNodesRequest(_In):
    nodes: list[NodeUpdateIn]


class DeleteNodesRequest(_In):
    nodeNames: list[Text]  # noqa: N815


class AddEdgesRequest(_In):
    edges: list[EdgeIn]


class UpdateEdgesRequest(_In):
    edges: list[EdgeUpdateIn]


class DeleteEdgesRequest(_In):
    edges: list[EdgeRef]


class MetadataRequest(_In):
    nodeName: Name  # noqa: N815
    metadata: Annotated[list[Text], Field(description='"Key: Value" strings.')]


# --- answers: MemoryMesh's {data, actionTaken, timestamp} ------------------------------------------


# Relationship types are answered in MemoryMesh's spelling: `LOCATED_IN` as `located_in`. A node's type is as
# given (shown_type).
MeshEdgeType = Annotated[str, AfterValidator(str.lower)]


class Node(BaseModel):
    name: str
    nodeType: str  # noqa: N815 - as given (shown_type)
    metadata: list[str]


class Edge(BaseModel):
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    from_: str = Field(alias="from")
    to: str
    edgeType: MeshEdgeType  # noqa: N815 - the registered type
    weight: float | None = None  # after the write; an edge deleted: the weight it had


class MeshAnswer(BaseModel):
    actionTaken: str  # noqa: N815
    timestamp: str


class NodesData(BaseModel):
    nodes: list[Node]


class EdgesData(BaseModel):
    edges: list[Edge]


class NamesData(BaseModel):
    nodeNames: list[str]  # noqa: N815


class MetadataData(BaseModel):
    nodeName: str  # noqa: N815
    metadata: list[str] = Field(description="The entries added (new ones only) or asked deleted.")


class NodesAnswer(MeshAnswer):
    data: NodesData


class EdgesAnswer(MeshAnswer):
    data: EdgesData


class NamesAnswer(MeshAnswer):
    data: NamesData


class MetadataAnswer(MeshAnswer):
    data: MetadataData


def own_links(relations: Sequence[Relation]) -> dict[str, dict[str, list[str]]]:
    """Each start's names reached, by relationship type: what its relationship fields hold (grouped once for an
    answer, not scanned again for each of its nodes)."""
    links: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for relation in relations:
        links[relation.from_][relation.relationType].append(relation.to)
    return links


def mesh_node(entity: Entity, registry: SchemaRegistry, links: Mapping[str, Sequence[str]]) -> Node:
    """`links`: the entity's own (`own_links`), which give its relationship fields' values. A node filed under the
    fallback label answers the type it was written with (MemoryMesh keeps any nodeType as given)."""
    entry = registry.get_entry(entity.entityType)
    metadata = with_declared_fields(entry, entity.observations, entity.properties, links)
    written = entity.properties.get(REMAP_FIELD)
    node_type = shown_type(entity.entityType, written if isinstance(written, str) else None, registry)
    return Node(name=entity.name if entity.name is not None else "", nodeType=node_type, metadata=metadata)


def shown_type(label: str, written: str | None, registry: SchemaRegistry) -> str:
    """A node's nodeType as MemoryMesh keeps it, as given (seed 000, 2.1): the type it was written with, where the
    call gives it or the node keeps it (`_schema_remap_from`: `npc`, `NPC`, `Wizard`, `startup`); else, for a label
    with typed tools, the schema file's name, as its add_ tool writes it (`Npc` as `npc`, `PlayerCharacter` as
    `player_character`); else the label, which is then how it was written (`Person`)."""
    if written is not None and written.strip(":"):
        return written.lstrip(":")
    entry = registry.get_entry(label)
    return tool_type_name(label) if entry is not None and entry.typed_tools else label


def _names_field(entry: str, fields: Mapping[str, Any]) -> bool:
    parsed = parse_entry(entry)
    return parsed is not None and key_fold(parsed[0]) in {name_fold(field) for field in fields}


def already_exists(what: str, name: str, **details: Any) -> GateRejection:
    """In MemoryMesh's words (seed 000, 7.2: "Node 'Gandalf' already exists")."""
    return GateRejection(ErrorCode.ALREADY_EXISTS, f"{what} '{name}' already exists", **details)


def _once(keys: list[Any], field: str) -> None:
    seen: set[Any] = set()
    for key in keys:
        if key in seen:
            raise GateRejection(ErrorCode.INVALID_INPUT, f"{key} is given twice", field=field, reason="given_twice")
        seen.add(key)


class MeshService:
    def __init__(self, memory: MemoryService) -> None:
        self.memory = memory

    @property
    def gate(self) -> Gate:
        return self.memory.gate

    # -- nodes ------------------------------------------------------------------------------------

    async def add_nodes(self, nodes: list[NodeIn], ctx: WriterContext, agent: Agent) -> NodesAnswer:
        """A name that exists under any label, or twice in the call, refuses the call (MemoryMesh's
        validateNodeDoesNotExist); one the registry refuses too; else each is created as create_entities does."""
        _once([node.name for node in nodes], "nodes")
        existing = await self.gate.reader.find_by_names(node.name for node in nodes)
        if existing:
            name = next(node.name for node in nodes if node.name in existing)
            raise already_exists("Node", name, field="nodes", names=sorted(existing))
        gate = self.gate
        entries = [resolve_label(n.nodeType, gate.registry, gate.policy, free_text=True).entry for n in nodes]
        properties = [metadata_properties(entry, n.metadata) for entry, n in zip(entries, nodes, strict=True)]
        entities = [EntityIn(name=n.name, entityType=n.nodeType, observations=n.metadata) for n in nodes]
        _outcomes, created = await self.memory.create_entities(entities, ctx, agent, properties=properties)
        if created.skipped:  # written by another agent between the look-up and the write
            written = [entity.name for entity in created.entities]
            raise already_exists("Node", created.skipped[0], field="nodes", names=created.skipped, written=written)
        given = {n.name: n.nodeType for n in nodes}
        done = [
            Node(name=e.name, nodeType=shown_type(e.entityType, given[e.name], gate.registry), metadata=e.observations)
            for e in created.entities
        ]
        return NodesAnswer(
            data=NodesData(nodes=done),
            actionTaken=f"Added nodes: {', '.join(n.name for n in done)}",
            timestamp=utc_now(),
        )

    async def update_nodes(self, updates: list[NodeUpdateIn], ctx: WriterContext, agent: Agent) -> NodesAnswer:
        """Each node must exist (ENTITY_NOT_FOUND, nothing written); `metadata` replaces its metadata. A node's type
        is its label, its identity in the graph and its history: a `nodeType` naming another label is refused
        (delete the node and add it again), one naming its own is accepted."""
        _once([update.name for update in updates], "nodes")
        targets = await locate_all(self.gate, [update.name for update in updates], field="nodes")
        for update, target in zip(updates, targets, strict=True):
            if update.nodeType is not None:
                wanted = resolve_label(update.nodeType, self.gate.registry, self.gate.policy, free_text=True)
                if wanted.entry.label != target.label:
                    raise GateRejection(
                        ErrorCode.INVALID_INPUT,
                        f"{update.name} is a {target.label}: a node's type is its label, which an update does not "
                        "change; delete the node and add it again under the new type",
                        field="nodeType",
                        reason="type_change",
                        current=target.label,
                        asked=wanted.entry.label,
                    )
        for update, target in zip(updates, targets, strict=True):
            await self._set_metadata(target, update.metadata, ctx, agent)
        done = await self._read_back(targets)
        return NodesAnswer(
            data=NodesData(nodes=done),
            actionTaken=f"Updated nodes: {', '.join(n.name for n in done)}",
            timestamp=utc_now(),
        )

    async def _set_metadata(
        self, target: Located, metadata: list[str] | None, ctx: WriterContext, agent: Agent
    ) -> dict[str, Any]:
        """The metadata replaced: the entries as given, the declared properties they name set, and those they no
        longer name removed (MemoryMesh replaces the whole array), but a required one, which the schema keeps."""
        entry = self.gate.registry.get_entry(target.label)

        def change(current: Mapping[str, Any]) -> dict[str, Any]:
            if metadata is None:
                return {}
            named = metadata_properties(entry, metadata)
            return {OBSERVATIONS: metadata, **dropped_fields(entry, metadata, current), **named}

        return await update_entity(self.gate, target, change, ctx, agent, also_declared=MEMORY_PROPERTIES)

    async def _read_back(self, targets: list[Located]) -> list[Node]:
        """The nodes as the graph holds them now, as the reads answer them (their declared fields among the
        metadata, a relationship field from their edges)."""
        opened = await self.gate.reader.open_nodes(OpenNodesRequest(names=[t.name for t in targets]))
        links = own_links(opened.relations)
        found = {(e.name, e.entityType): e for e in opened.entities}
        registry = self.gate.registry
        return [
            mesh_node(found[(t.name, t.label)], registry, links.get(t.name, {}))
            if (t.name, t.label) in found
            else Node(name=t.name, nodeType=shown_type(t.label, None, registry), metadata=[])
            for t in targets
        ]

    async def delete_nodes(self, names: list[str], agent: Agent) -> NamesAnswer:
        """Nodes and every edge from or to them; a name that is not there is passed over (MemoryMesh's deleteNodes)."""
        await self.memory.delete_entities(names, agent)
        return NamesAnswer(
            data=NamesData(nodeNames=names), actionTaken=f"Deleted nodes: {', '.join(names)}", timestamp=utc_now()
        )

    # -- edges ------------------------------------------------------------------------------------

    async def _edges(self, edges: list[Any]) -> list[tuple[Any, str, Located, Located]]:
        """Each edge with its registered type and its two nodes (ENDPOINT_NOT_FOUND for a name that is none; a
        name held under several labels is INVALID_INPUT, as the knowledge tools refuse it)."""
        registry = self.gate.registry
        types = [resolve_relationship_type(edge.edgeType, registry, free_text=True).entry.label for edge in edges]
        _once([(e.from_, e.to, t) for e, t in zip(edges, types, strict=True)], "edges")
        names = list(dict.fromkeys(n for edge in edges for n in (edge.from_, edge.to)))
        try:
            located = dict(zip(names, await locate_all(self.gate, names, field="edges"), strict=True))
        except GateRejection as exc:
            if exc.rejected.error_code is not ErrorCode.ENTITY_NOT_FOUND:
                raise
            raise GateRejection(ErrorCode.ENDPOINT_NOT_FOUND, exc.rejected.message, field="edges") from exc
        return [(e, t, located[e.from_], located[e.to]) for e, t in zip(edges, types, strict=True)]

    async def _stored(self, planned: list[tuple[Any, str, Located, Located]]) -> list[dict[str, Any] | None]:
        """Each planned edge's stored properties (None: no such edge), one read per type and pair of labels, so a
        call of many edges costs a few statements, not one an edge."""
        shapes: dict[tuple[str, str, str], list[tuple[str, str]]] = defaultdict(list)
        for _edge, type_, start, end in planned:
            shapes[(type_, start.label, end.label)].append((start.key, end.key))
        found: dict[tuple[str, str, str, str, str], dict[str, Any]] = {}
        for shape, pairs in shapes.items():
            read = relationship_properties(*shape)
            params = {"pairs": [{"from_key": a, "to_key": b} for a, b in dict.fromkeys(pairs)]}
            for row in await read_to_write(self.gate.backend, Statement(read.text, params)):
                found[(*shape, row["from_key"], row["to_key"])] = row["props"]
        return [found.get((type_, a.label, b.label, a.key, b.key)) for _edge, type_, a, b in planned]

    async def _write_edge(
        self, type_: str, start: Located, end: Located, weight: float | None, ctx: WriterContext, agent: Agent
    ) -> float:
        request = WriteRelationshipRequest(
            type=type_,
            from_label=start.label,
            from_keys=start.keys,
            to_label=end.label,
            to_keys=end.keys,
            source=ctx.source,
            extraction_method=ctx.extraction_method,
            reliability=ctx.reliability,
            weight=weight,
        )
        return (await self.gate.write_relationship(request, agent)).weight

    async def add_edges(self, edges: list[EdgeIn], ctx: WriterContext, agent: Agent) -> EdgesAnswer:
        """Both nodes must exist and the edge must not (MemoryMesh's validateEdgeReferences and
        validateEdgeUniqueness): one that does refuses the call, before anything is written. Each is created only
        where it is still absent when its statement runs, as create_relations creates, so two agents adding one
        edge at once make one edge and one refusal."""
        planned = await self._edges(edges)
        for (edge, type_, _start, _end), props in zip(planned, await self._stored(planned), strict=True):
            if props is not None:
                raise already_exists(
                    "Edge", f"{edge.from_} -[{type_.lower()}]-> {edge.to}", field="edges", edgeType=type_
                )
        relations = [RelationIn(from_=edge.from_, to=edge.to, relationType=type_) for edge, type_, _, _ in planned]
        weights = [edge.weight for edge in edges]
        _outcomes, created = await self.memory.create_relations(relations, ctx, agent, weights=weights)
        if created.skipped:  # written by another agent between the look-up and the write
            first = created.skipped[0]
            raise already_exists(
                "Edge",
                f"{first.from_} -[{first.relationType.lower()}]-> {first.to}",
                field="edges",
                edgeType=first.relationType,
                written=[relation.model_dump(by_alias=True) for relation in created.relations],
            )
        done = [
            Edge(from_=edge.from_, to=edge.to, edgeType=type_, weight=1.0 if edge.weight is None else edge.weight)
            for edge, type_, _, _ in planned
        ]
        return EdgesAnswer(data=EdgesData(edges=done), actionTaken=f"Added {len(done)} edges", timestamp=utc_now())

    async def update_edges(self, edges: list[EdgeUpdateIn], ctx: WriterContext, agent: Agent) -> EdgesAnswer:
        """Each edge must exist (RELATION_NOT_FOUND, nothing written); a `weight` is averaged in, (current + new)
        / 2, as MemoryMesh's updateWeight does. Each edge is answered with its weight after."""
        planned = await self._edges(edges)
        stored = []
        for (edge, type_, _start, _end), props in zip(planned, await self._stored(planned), strict=True):
            if props is None:
                raise GateRejection(
                    ErrorCode.RELATION_NOT_FOUND,
                    f"Edge not found: {edge.from_} -[{type_}]-> {edge.to}",
                    field="edges",
                    edgeType=type_,
                )
            stored.append(props)
        done = []
        for (edge, type_, start, end), props in zip(planned, stored, strict=True):
            weight = props.get("weight", 1.0)
            if edge.weight is not None:
                weight = await self._write_edge(type_, start, end, edge.weight, ctx, agent)
            done.append(Edge(from_=edge.from_, to=edge.to, edgeType=type_, weight=weight))
        return EdgesAnswer(data=EdgesData(edges=done), actionTaken=f"Updated {len(done)} edges", timestamp=utc_now())

    async def delete_edges(self, edges: list[EdgeRef], agent: Agent) -> EdgesAnswer:
        """Exact (from, to, edgeType) matches; an edge that is not there is passed over (MemoryMesh's deleteEdges).
        Answers the edges deleted, each with the type asked and the weight it had (1.0 where it had none, as the
        reads answer it)."""
        relations = [RelationIn(from_=e.from_, to=e.to, relationType=e.edgeType) for e in edges]
        deleted = await self.memory.deleted_relations(relations, agent)
        gone = [
            Edge(from_=r.from_, to=r.to, edgeType=r.relationType, weight=weight_of({"weight": weight}))
            for r, weight in deleted
        ]
        return EdgesAnswer(data=EdgesData(edges=gone), actionTaken=f"Deleted {len(gone)} edges", timestamp=utc_now())

    # -- metadata ---------------------------------------------------------------------------------

    async def add_metadata(self, request: MetadataRequest, ctx: WriterContext, agent: Agent) -> MetadataAnswer:
        """Appended where the node does not show it already (exact match: an entry it shows is passed over, as
        MemoryMesh dedupes, and not reported); ENTITY_NOT_FOUND for a node that is not there. An entry that names a
        declared field ("Status: Deceased" on an npc) sets it first, checked as add_nodes checks it: the field is
        what the metadata shows (core/metadata.with_declared_fields), so the entry is not masked by it. The answer
        lists the entries the node shows now that it did not."""
        [target] = await locate_all(self.gate, [request.nodeName], field="nodeName")
        [before] = await self._read_back([target])
        fresh = [text for text in dict.fromkeys(request.metadata) if text not in before.metadata]
        if fresh:
            named = metadata_properties(self.gate.registry.get_entry(target.label), fresh)
            if named:
                await update_entity(
                    self.gate, target, lambda _held: dict(named), ctx, agent, also_declared=MEMORY_PROPERTIES
                )
            await self.memory.add_observations([ObservationIn(entityName=request.nodeName, contents=fresh)], ctx, agent)
        [after] = await self._read_back([target]) if fresh else [before]
        return MetadataAnswer(
            data=MetadataData(nodeName=request.nodeName, metadata=[text for text in fresh if text in after.metadata]),
            actionTaken=f"Added metadata to node: {request.nodeName}",
            timestamp=utc_now(),
        )

    async def delete_metadata(self, request: MetadataRequest, ctx: WriterContext, agent: Agent) -> MetadataAnswer:
        """The entries equal to those given are removed, a declared field's with its property (a required one is
        refused); ENTITY_NOT_FOUND for a node that is not there (where the official server's delete_observations
        passes over it, MemoryMesh throws). The answer lists the entries the node showed and shows no more: a
        relationship field's entry is shown from the node's edge, which delete_edges removes."""
        [target] = await locate_all(self.gate, [request.nodeName], field="nodeName")
        entry = self.gate.registry.get_entry(target.label)
        [before] = await self._read_back([target])

        def change(current: Mapping[str, Any]) -> dict[str, Any]:
            """The entries removed, and the declared fields they show ("Role: Wizard" is the node's role)."""
            held = list(current.get(OBSERVATIONS) or [])
            fields = deleted_fields(entry, request.metadata, current)
            # An entry as written shows its field's value (with_declared_fields): with the field, it goes too.
            kept = [e for e in held if e not in request.metadata and not _names_field(e, fields)]
            return {**({OBSERVATIONS: kept} if kept != held else {}), **fields}

        await update_entity(self.gate, target, change, ctx, agent, also_declared=MEMORY_PROPERTIES)
        [after] = await self._read_back([target])
        gone = [
            text for text in dict.fromkeys(request.metadata) if text in before.metadata and text not in after.metadata
        ]
        return MetadataAnswer(
            data=MetadataData(nodeName=request.nodeName, metadata=gone),
            actionTaken=f"Deleted metadata from node: {request.nodeName}",
            timestamp=utc_now(),
        )

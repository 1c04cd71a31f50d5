"""The official MCP memory server's tools (seed 001), with every write put through the gate.

`entityType` is the label (remapped or rejected by the registry), `name` the merge key, observations
a list property; provenance comes from the `WriterContext` (the client's name unless configured).
Entity names are unique across labels, as in the official server: a name that exists under any
registered label is not created again.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from write_gate.access.agents import Agent
from write_gate.core.claims import claim_value
from write_gate.core.cypher.deciding_writes import node_values
from write_gate.core.cypher.memory_writes import (
    add_observations,
    create_node,
    create_node_if_name_absent,
    create_relationship_if_absent,
    delete_nodes,
    delete_observations,
    delete_relationship,
)
from write_gate.core.cypher.statement import Statement
from write_gate.core.decisions import check_types, plan_node_write, plan_relationship_write, resolve_relationship_type
from write_gate.core.formula import compute_confidence
from write_gate.core.history import Subject
from write_gate.core.knowledge import IMPORTANCE, KNOWLEDGE_PROPERTIES, TAGS, WrittenImportance
from write_gate.core.model import ErrorCode, GateRejection, WriteNodeRequest, WriteRelationshipRequest
from write_gate.core.values import value_kind
from write_gate.services.aliases import survivor_names
from write_gate.services.change_records import change_stamp, created_changes
from write_gate.services.embeddings import Subject as Embedded
from write_gate.services.gate import Gate, read_to_write, run_write
from write_gate.services.hierarchy_rule import hierarchy_breach, hierarchy_breaches
from write_gate.services.reads import Importance, Named, OpenNodesRequest, ReadGraphRequest, SearchNodesRequest, Tags

# The one property the official server's entities carry: every label this profile writes takes it, whatever
# its registry entry declares, so no undeclared-property policy refuses an entity.
MEMORY_PROPERTIES = frozenset({"observations"})


@dataclass(frozen=True)
class WriterContext:
    """Who writes through the memory profile, for provenance."""

    source: str
    extraction_method: str
    reliability: float


# --- inputs: the official server's shapes (unknown keys are ignored, as its schemas do) ----------


class _In(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True, serialize_by_alias=True)


class EntityIn(_In):
    name: Annotated[str, Field(description="The name of the entity")]
    entityType: Annotated[str, Field(description="The type of the entity")]  # noqa: N815
    observations: Annotated[
        list[str],
        Field(default_factory=list, description="An array of observation contents associated with the entity"),
    ]


class NewEntityIn(EntityIn):
    """create_entities' item: the official server's three fields, and memory-mcp's tags and importance."""

    tags: Annotated[list[str] | None, Field(description="Tags (memory-mcp's; stored lower-cased, once each)")] = None
    importance: Annotated[WrittenImportance | None, Field(description="Importance from 0 to 10 (memory-mcp's)")] = None

    def knowledge(self) -> dict[str, Any]:
        """The tags and importance given, as properties."""
        given = {TAGS: self.tags, IMPORTANCE: self.importance}
        return {name: value for name, value in given.items() if value is not None}


class RelationIn(_In):
    from_: Annotated[str, Field(alias="from", description="The name of the entity where the relation starts")]
    to: Annotated[str, Field(description="The name of the entity where the relation ends")]
    relationType: Annotated[str, Field(description="The type of the relation")]  # noqa: N815


class ObservationIn(_In):
    entityName: Annotated[str, Field(description="The name of the entity to add the observations to")]  # noqa: N815
    contents: Annotated[list[str], Field(description="An array of observation contents to add")]


class DeletionIn(_In):
    entityName: Annotated[str, Field(description="The name of the entity containing the observations")]  # noqa: N815
    observations: Annotated[list[str], Field(description="An array of observations to delete")]


class CreateEntitiesRequest(_In):
    entities: list[NewEntityIn]


class CreateRelationsRequest(_In):
    relations: list[RelationIn]


class AddObservationsRequest(_In):
    observations: list[ObservationIn]


class DeleteEntitiesRequest(_In):
    entityNames: Annotated[list[str], Field(description="An array of entity names to delete")]  # noqa: N815


class DeleteObservationsRequest(_In):
    deletions: list[DeletionIn]


class DeleteRelationsRequest(_In):
    relations: Annotated[list[RelationIn], Field(description="An array of relations to delete")]


# The reads, as the official server takes them: an argument it does not know is ignored, not refused (some
# clients send one to tools that take none, such as `random_string`).


class ReadGraphArgs(ReadGraphRequest):
    model_config = ConfigDict(extra="ignore")


class SearchNodesArgs(SearchNodesRequest):
    model_config = ConfigDict(extra="ignore")


class OpenNodesArgs(OpenNodesRequest):
    model_config = ConfigDict(extra="ignore")


# --- outcomes ------------------------------------------------------------------------------------


class ItemOutcome(BaseModel):
    """What happened to one item of a call (or one line of an import)."""

    index: int
    status: Literal["created", "skipped", "rejected"]
    label: str | None = None
    remapped_from: str | None = None
    error_code: ErrorCode | None = None
    message: str | None = None
    details: dict[str, Any] | None = None  # the refusal's own (an endpoint label not allowed, say)


class Remapped(BaseModel):
    name: str
    remapped_from: str
    to: str


class CreatedEntity(EntityIn):
    """An entity created: the official server's three fields, and memory-mcp's tags (as stored: lower-cased, once
    each) and importance where they were given."""

    tags: Tags = None
    importance: Importance = None


class EntitiesCreated(BaseModel):
    entities: list[CreatedEntity] = Field(description="The entities created, with their canonical entityType.")
    skipped: list[str] = Field(default_factory=list, description="Names that already existed: not created again.")
    remapped: list[Remapped] = Field(default_factory=list)


class RelationsCreated(BaseModel):
    relations: list[RelationIn] = Field(description="The relations created, with their canonical relationType.")
    skipped: list[RelationIn] = Field(default_factory=list, description="Relations that already existed.")
    remapped: list[Remapped] = Field(default_factory=list)


class ObservationsAdded(BaseModel):
    class Added(BaseModel):
        entityName: str  # noqa: N815
        addedObservations: list[str]  # noqa: N815

    results: list[Added]


class Done(BaseModel):
    """The official server's answer to a delete."""

    # Always sent, so the output schema names it beside message, as the official one does.
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    success: Literal[True] = True
    message: str


def _refused(index: int, exc: GateRejection) -> ItemOutcome:
    r = exc.rejected
    return ItemOutcome(
        index=index, status="rejected", error_code=r.error_code, message=r.message, details=r.details or None
    )


def _reject_all(what: str, outcomes: list[ItemOutcome], total: int) -> None:
    rejected = [o for o in outcomes if o.status == "rejected"]
    if rejected:
        raise GateRejection(
            rejected[0].error_code or ErrorCode.INVALID_INPUT,
            f"{len(rejected)} of {total} {what} were rejected; nothing was written",
            rejected=[o.model_dump(mode="json", exclude_none=True) for o in rejected],
        )


class MemoryService:
    def __init__(self, gate: Gate) -> None:
        self.gate = gate

    async def _read(self, statement: Statement) -> list[dict[str, Any]]:
        """A write's own read (a hierarchy link's check)."""
        return await read_to_write(self.gate.backend, statement)

    async def _found(self, names: Iterable[str]) -> dict[str, list[tuple[int, list[str]]]]:
        return await self.gate.reader.find_by_names(names)

    async def _survivor_names(self, names: Iterable[str]) -> tuple[dict[str, str], Named]:
        """Names that are aliases (merged by merge_entities), each with its survivor's: writes go there; and
        what the look-up found (still so for these names when none is an alias)."""
        gate = self.gate
        named = await gate.reader.named(names)
        return await survivor_names(gate.reader.read, gate.registry, named.found, named.aliases), named

    # -- create_entities ------------------------------------------------------------------------

    async def create_entities(
        self,
        entities: list[EntityIn],
        ctx: WriterContext,
        agent: Agent,
        *,
        atomic: bool = True,
        write: bool = True,
        properties: Sequence[Mapping[str, Any]] = (),
    ) -> tuple[list[ItemOutcome], EntitiesCreated]:
        """`atomic`: one rejected entity rejects the call (the tool); otherwise each item has its outcome
        (import). `write=False` decides everything and writes nothing (a dry run). `properties`: more for each
        entity, in order (MemoryMesh's metadata read as declared properties: services.mesh)."""
        gate, stamps = self.gate, self.gate.call_stamp(agent)
        stamp = stamps.current()
        plans: dict[int, Any] = {}
        outcomes: dict[int, ItemOutcome] = {}
        for i, entity in enumerate(entities):
            request = WriteNodeRequest(
                label=entity.entityType,
                merge_keys={"name": entity.name},
                properties={
                    "observations": entity.observations,
                    **(entity.knowledge() if isinstance(entity, NewEntityIn) else {}),
                    **(properties[i] if properties else {}),
                },
                source=ctx.source,
                extraction_method=ctx.extraction_method,
                reliability=ctx.reliability,
            )
            try:
                plans[i] = plan_node_write(
                    request,
                    gate.registry,
                    gate.policy,
                    gate.provider,
                    stamp,
                    free_text_label=True,
                    also_declared=MEMORY_PROPERTIES | KNOWLEDGE_PROPERTIES,
                )
                agent.grant.check_labels([plans[i].result.label])
            except GateRejection as exc:
                plans.pop(i, None)
                outcomes[i] = _refused(i, exc)
        if atomic:
            _reject_all("entities", list(outcomes.values()), len(entities))
        # A dry run looks the names up; a real one checks and writes in one statement per entity.
        existing = {} if write else await self._found(entities[i].name for i in plans)
        scope = gate.reader.name_scope()
        seen: set[str] = set()
        change = change_stamp(agent.id, stamp.now)
        result = EntitiesCreated(entities=[])
        for i, plan in plans.items():
            entity, label = entities[i], plan.result.label
            if entity.name in existing or entity.name in seen:
                outcomes[i] = ItemOutcome(
                    index=i, status="skipped", label=label, message="an entity with this name exists"
                )
                result.skipped.append(entity.name)
                continue
            seen.add(entity.name)
            if write:
                # The node is new (the statement finds the name nowhere first): created with what it holds, its
                # search text and its record (core.history, from nothing), under the call's change id, stamped as
                # it is sent (services/call_stamps.py).
                keys, now = {"name": entity.name}, stamps.current().now
                provenance, change = plan.provenance.restamped(now), change.restamped(now)
                values = node_values(
                    label,
                    keys,
                    plan.properties,
                    provenance,
                    plan.result.remapped_from,
                    plan.result.property_remaps,
                    change.change_id,
                    batch=False,
                )
                subject = Subject.node(label, values["key"])
                changes = created_changes(subject, {**keys, **plan.properties}, change, provenance)
                text = create_node(label, plan.result.remapped_from is not None).text
                create = Statement(text, {**values, "changes": changes})
                statement = create_node_if_name_absent(scope, entity.name, create)
                if gate.embeddings is not None:  # its texts' vectors, created only with the node (after the look-up)
                    written = {**keys, **plan.properties}
                    statement = await gate.embeddings.after_lookup(
                        statement, gate.registry, Embedded(label, values["key"], written)
                    )
                rows = await run_write(gate.backend, statement)
                if not (rows and rows[0]["written"]):
                    outcomes[i] = ItemOutcome(
                        index=i, status="skipped", label=label, message="an entity with this name exists"
                    )
                    result.skipped.append(entity.name)
                    continue
            outcomes[i] = ItemOutcome(index=i, status="created", label=label, remapped_from=plan.result.remapped_from)
            given = {k: plan.properties[k] for k in KNOWLEDGE_PROPERTIES if k in plan.properties}  # as stored
            result.entities.append(
                CreatedEntity(name=entity.name, entityType=label, observations=entity.observations, **given)
            )
            if plan.result.remapped_from:
                result.remapped.append(Remapped(name=entity.name, remapped_from=plan.result.remapped_from, to=label))
        return [outcomes[i] for i in sorted(outcomes)], result

    # -- create_relations -----------------------------------------------------------------------

    async def create_relations(
        self,
        relations: list[RelationIn],
        ctx: WriterContext,
        agent: Agent,
        *,
        atomic: bool = True,
        write: bool = True,
        known: dict[str, str] | None = None,
        weights: Sequence[float | None] = (),
    ) -> tuple[list[ItemOutcome], RelationsCreated]:
        """As create_entities; `known` adds names (with their labels) a dry run would have created. `weights`: each
        new relation's, in order (MemoryMesh's add_edges; 1.0 where none)."""
        gate, stamps = self.gate, self.gate.call_stamp(agent)
        stamp = stamps.current()
        found = None
        if write:
            renamed, named = await self._survivor_names(n for r in relations for n in (r.from_, r.to))
            relations = [
                r.model_copy(update={"from_": renamed.get(r.from_, r.from_), "to": renamed.get(r.to, r.to)})
                for r in relations
            ]
            found = None if renamed else named.found  # no alias among them: the look-up stands
        if found is None:
            found = await self._found(n for r in relations for n in (r.from_, r.to))
        for name, label in (known or {}).items():
            found.setdefault(name, [(-1, [label])])
        plans: dict[int, Any] = {}
        outcomes: dict[int, ItemOutcome] = {}
        for i, relation in enumerate(relations):
            missing = [side for side, name in (("from", relation.from_), ("to", relation.to)) if name not in found]
            if missing:
                outcomes[i] = ItemOutcome(
                    index=i,
                    status="rejected",
                    error_code=ErrorCode.ENDPOINT_NOT_FOUND,
                    message=f"no entity named {relation.from_ if missing[0] == 'from' else relation.to!r}",
                )
                continue
            request = WriteRelationshipRequest(
                type=relation.relationType,
                from_label=found[relation.from_][0][1][0],
                from_keys={"name": relation.from_},
                to_label=found[relation.to][0][1][0],
                to_keys={"name": relation.to},
                source=ctx.source,
                extraction_method=ctx.extraction_method,
                reliability=ctx.reliability,
            )
            try:
                plans[i] = plan_relationship_write(
                    request, gate.registry, gate.policy, gate.provider, stamp, free_text_type=True
                )
                agent.grant.check_types([plans[i].result.type])
            except GateRejection as exc:
                plans.pop(i, None)
                outcomes[i] = _refused(i, exc)
        hierarchy = gate.policy.hierarchy_type
        links = [(i, plan.start, plan.end) for i, plan in plans.items() if plan.result.type == hierarchy]
        for i, refusal in (await hierarchy_breaches(self._read, hierarchy, links) if links else {}).items():
            plans.pop(i)
            outcomes[i] = _refused(i, refusal)
        if atomic:
            _reject_all("relations", list(outcomes.values()), len(relations))
        result = RelationsCreated(relations=[])
        change = change_stamp(agent.id, stamp.now)
        for i, plan in plans.items():
            canonical = RelationIn(from_=relations[i].from_, to=relations[i].to, relationType=plan.result.type)
            start, end = plan.start, plan.end
            subject = Subject.relationship(plan.result.type, start.label, start.key, end.label, end.key)
            # A memory relation holds no values but its weight (1.0 when created): recorded, so its creation is.
            given = weights[i] if weights else None
            weight = 1.0 if given is None else given
            now = stamps.current().now  # stamped as it is sent (services/call_stamps.py)
            provenance, change = plan.provenance.restamped(now), change.restamped(now)
            changes = created_changes(subject, {**plan.properties, "weight": weight}, change, provenance)
            statement = create_relationship_if_absent(
                plan.result.type,
                start,
                end,
                plan.properties,
                provenance,
                plan.result.remapped_from,
                changes,
                weight,
                hierarchy=plan.result.type == hierarchy,
            )
            rows = await run_write(gate.backend, statement) if write else [{"created": 1}]
            raced = not (rows and rows[0]["created"]) and plan.result.type == hierarchy
            # Another writer linked the child since the check: refused by the statement, as the read says.
            if raced and (breach := await hierarchy_breach(self._read, hierarchy, start, end)):
                if atomic:  # the tool's answer lists what it created: this one it could not
                    raise breach
                outcomes[i] = _refused(i, breach)
                continue
            if rows and rows[0]["created"]:
                outcomes[i] = ItemOutcome(
                    index=i, status="created", label=plan.result.type, remapped_from=plan.result.remapped_from
                )
                result.relations.append(canonical)
                if plan.result.remapped_from:
                    result.remapped.append(
                        Remapped(
                            name=f"{canonical.from_}->{canonical.to}",
                            remapped_from=plan.result.remapped_from,
                            to=plan.result.type,
                        )
                    )
            else:
                outcomes[i] = ItemOutcome(
                    index=i, status="skipped", label=plan.result.type, message="this relation exists"
                )
                result.skipped.append(canonical)
        return [outcomes[i] for i in sorted(outcomes)], result

    # -- observations ---------------------------------------------------------------------------

    def _claim(self, ctx: WriterContext, agent: Agent, now: str) -> list[Any]:
        """The claim of a value this writer changes (the observations list)."""
        confidence = compute_confidence(self.gate.provider, ctx.reliability, ctx.extraction_method)
        return claim_value(agent.id, ctx.source, ctx.extraction_method, confidence, now)

    async def add_observations(self, items: list[ObservationIn], ctx: WriterContext, agent: Agent) -> ObservationsAdded:
        """Appending an observation is a change, not a new claim about the entity: it is stamped
        `last_updated` / `updated_by`, and the entity's claim (source, method, confidence, written_by)
        stays that of whoever wrote it."""
        gate, stamps = self.gate, self.gate.call_stamp(agent)
        renamed, named = await self._survivor_names(item.entityName for item in items)
        asked = [item.entityName for item in items]  # answered as asked, written to the survivor
        items = [
            item.model_copy(update={"entityName": renamed.get(item.entityName, item.entityName)}) for item in items
        ]
        found = await self._found(item.entityName for item in items) if renamed else named.found
        for item in items:
            if item.entityName not in found:
                # The official server's words, so prompts written for it still read them.
                raise GateRejection(
                    ErrorCode.ENTITY_NOT_FOUND,
                    f"Entity with name {item.entityName} not found",
                    entityName=item.entityName,
                )
            kind = value_kind("observations", item.contents, gate.policy.limits)
            agent.grant.check_labels(labels[0] for _id, labels in found[item.entityName])
            for _node_id, labels in found[item.entityName]:
                entry = gate.registry.get_entry(labels[0])
                if entry is not None:
                    check_types(entry, {"observations": item.contents}, {"observations": kind})
        change = change_stamp(agent.id, stamps.current().now)
        claim = self._claim(ctx, agent, change.at)
        results = []
        for name, item in zip(asked, items, strict=True):
            added: list[str] = []
            contents = list(dict.fromkeys(item.contents))
            for node_id, labels in found[item.entityName]:
                if (now := stamps.current().now) != change.at:  # stamped as it is sent (services/call_stamps.py)
                    change, claim = change.restamped(now), self._claim(ctx, agent, now)
                statement = add_observations(
                    node_id, item.entityName, contents, change, agent.id, claim, gate.backend.dialect
                )
                if gate.embeddings is not None:  # the appended texts' vectors, in the same statement
                    subject = Embedded(labels[0], None, {"observations": contents})
                    statement = await gate.embeddings.on_found_node(statement, gate.registry, subject)
                rows = await run_write(gate.backend, statement)
                added += [o for row in rows for o in row["added"] if o not in added]
            results.append(ObservationsAdded.Added(entityName=name, addedObservations=added))
        return ObservationsAdded(results=results)

    async def delete_observations(self, items: list[DeletionIn], ctx: WriterContext, agent: Agent) -> Done:
        """A missing entity is a silent no-op, as in the official server."""
        found = await self._found(item.entityName for item in items)
        agent.grant.check_labels(labels[0] for hits in found.values() for _id, labels in hits)
        stamps = self.gate.call_stamp(agent)
        change = change_stamp(agent.id, stamps.current().now)
        claim = self._claim(ctx, agent, change.at)
        for item in items:
            for node_id, labels in found.get(item.entityName, []):
                if (now := stamps.current().now) != change.at:  # stamped as it is sent (services/call_stamps.py)
                    change, claim = change.restamped(now), self._claim(ctx, agent, now)
                statement = delete_observations(
                    node_id, item.entityName, item.observations, change, agent.id, claim, self.gate.backend.dialect
                )
                if self.gate.embeddings is not None:  # the deleted texts' vectors go in the same statement
                    subject = Embedded(labels[0], None, {})
                    statement = await self.gate.embeddings.on_found_node(
                        statement, self.gate.registry, subject, dropped=item.observations
                    )
                await run_write(self.gate.backend, statement)
        return Done(message="Observations deleted successfully")

    # -- deletes --------------------------------------------------------------------------------

    async def delete_entities(self, names: list[str], agent: Agent) -> Done:
        found = await self._found(names)
        agent.grant.check_labels(labels[0] for hits in found.values() for _id, labels in hits)
        ids = [node_id for hits in found.values() for node_id, _ in hits]
        if not ids:
            return Done(message="Entities deleted successfully")
        allowed = agent.grant.writable_types()
        embedded = self.gate.embeddings is not None
        if allowed is not None:
            # A cascading delete removes relationships too: the agent needs the grant for each of their types.
            agent.grant.check_types(await self.gate.reader.relationship_types(ids))
        rows = await run_write(
            self.gate.backend,
            delete_nodes(
                [(node_id, name) for name, hits in found.items() for node_id, _ in hits],
                allowed,
                change_stamp(agent.id),
                vectors=embedded,
            ),
        )
        if (rows[0]["deleted"] if rows else 0) < len(ids):
            # A relationship of another type was added between the check and the delete: nothing of it is lost.
            agent.grant.check_types(await self.gate.reader.relationship_types(ids))
        return Done(message="Entities deleted successfully")

    async def delete_relations(self, relations: list[RelationIn], agent: Agent) -> Done:
        """Exact (from, to, type) matches; a relation that is not there is a no-op."""
        await self.deleted_relations(relations, agent)
        return Done(message="Relations deleted successfully")

    async def deleted_relations(
        self, relations: list[RelationIn], agent: Agent
    ) -> list[tuple[RelationIn, float | None]]:
        """Deletes each relation given that is there (exact matches); answers those deleted, each with the weight
        it had (None: it had none)."""
        registry = self.gate.registry  # no registry: say so, rather than "deleted"
        found = await self._found(n for r in relations for n in (r.from_, r.to))
        stamps = self.gate.call_stamp(agent)
        change = change_stamp(agent.id, stamps.current().now)
        deleted = []
        for relation in relations:
            try:
                type_ = resolve_relationship_type(relation.relationType, registry, free_text=True).entry.label
            except GateRejection:
                continue  # an unregistered type cannot be in the graph
            agent.grant.check_types([type_])
            for from_id, _ in found.get(relation.from_, []):
                for to_id, _ in found.get(relation.to, []):
                    change = change.restamped(stamps.current().now)  # as it is sent (services/call_stamps.py)
                    statement = delete_relationship(type_, from_id, relation.from_, to_id, relation.to, change)
                    rows = await run_write(self.gate.backend, statement)
                    if rows and rows[0]["deleted"]:
                        weights = rows[0]["weights"]
                        deleted.append((relation, weights[0] if weights else None))
        return deleted

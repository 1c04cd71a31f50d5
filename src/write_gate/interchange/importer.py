"""import_graph and `write-gate import --format`: records (import_records.py) written through the gate, each as a
write_node / write_relationship would be (registry, grant, computed provenance, claims, history, the guarded
retry), under a merge strategy (core/import_merge.py) for what exists already."""

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

from write_gate.access.agents import Agent
from write_gate.core.cypher.aliases import ALIAS_OF
from write_gate.core.cypher.records import current_relationship
from write_gate.core.cypher.statement import Statement
from write_gate.core.decisions import plan_node_write, plan_relationship_write
from write_gate.core.identity import identity_key
from write_gate.core.import_merge import Strategy, entity_action, merged_values, relation_action
from write_gate.core.knowledge import DEFAULT_HIERARCHY_TYPE
from write_gate.core.knowledge import KNOWLEDGE_PROPERTIES as KNOWN_EVERYWHERE
from write_gate.core.model import ErrorCode, GateRejection, WriteNodeRequest, WriteRelationshipRequest
from write_gate.interchange.import_records import EntityRecord, Parsed, RelationRecord, split_id
from write_gate.services.aliases import survivor_of
from write_gate.services.gate import Gate, read_to_write
from write_gate.services.memory import MEMORY_PROPERTIES, WriterContext

# The values every label takes whatever its entry declares: the memory profile's observations, the knowledge
# tools' tags and importance (see import_records.values).
KNOWLEDGE_PROPERTIES = MEMORY_PROPERTIES | KNOWN_EVERYWHERE

Progress = Callable[[int, int], Awaitable[None]]


async def no_progress(_done: int, _total: int) -> None:
    return None


class ImportProblem(BaseModel):
    """Where (`line` of a line-based file, else `index` in its list) and why."""

    line: int | None = None
    index: int | None = None
    kind: str = Field(description="entity, relation, or record (one that did not parse)")
    error_code: ErrorCode
    message: str

    @model_serializer(mode="wrap")
    def _one_place(self, handler: SerializerFunctionWrapHandler):  # noqa: ANN202 - keeps the schema
        return {k: v for k, v in handler(self).items() if v is not None}


class ImportAnswer(BaseModel):
    entitiesCreated: int = 0  # noqa: N815 - memory-mcp's names
    entitiesUpdated: int = 0  # noqa: N815
    entitiesSkipped: int = 0  # noqa: N815
    relationsCreated: int = 0  # noqa: N815
    relationsUpdated: int = 0  # noqa: N815
    relationsSkipped: int = 0  # noqa: N815
    errors: list[ImportProblem] = Field(default_factory=list)
    dryRun: bool = False  # noqa: N815


class _Import:
    def __init__(self, gate: Gate, writer: WriterContext, agent: Agent, strategy: Strategy, dry_run: bool) -> None:
        self.gate, self.writer, self.agent, self.strategy, self.dry_run = gate, writer, agent, strategy, dry_run
        self.answer = ImportAnswer(dryRun=dry_run)
        self.by_name: dict[str, tuple[str, dict[str, Any]]] = {}  # this file's entities: name -> label, keys
        self.by_id: dict[str, tuple[str, dict[str, Any]]] = {}  # and by the id the file gives them
        self.written: set[tuple[str, str]] = set()  # label and _key of each entity imported (or, dry, that would be)

    def problem(self, parsed: Parsed, kind: str, code: ErrorCode, message: str) -> None:
        place, number = parsed.where
        self.answer.errors.append(ImportProblem(**{place: number}, kind=kind, error_code=code, message=message))

    def refused(self, parsed: Parsed, kind: str, exc: GateRejection) -> None:
        """An item's own refusal is one of the answer's errors; an engine that went away stops the import, refused
        as a whole (never an answer of success whose every item failed), saying what was done before it."""
        if exc.rejected.error_code is ErrorCode.BACKEND_UNAVAILABLE:
            done = self.answer.model_dump(exclude={"errors"})
            raise GateRejection(ErrorCode.BACKEND_UNAVAILABLE, exc.rejected.message, **exc.rejected.details, done=done)
        self.problem(parsed, kind, exc.rejected.error_code, exc.rejected.message)

    def node_request(self, record: EntityRecord, values: dict[str, Any]) -> WriteNodeRequest:
        source, method = record.claim()
        return WriteNodeRequest(
            label=record.the_label,
            merge_keys=record.merge_keys,
            properties=values,
            source=source or self.writer.source,
            extraction_method=method or self.writer.extraction_method,
            reliability=self.writer.reliability,
        )

    def planned(self, request: WriteNodeRequest) -> tuple[str, dict[str, Any]]:
        """The canonical label and merge keys the gate would write (it checks the registry and the grant)."""
        gate = self.gate
        plan = plan_node_write(
            request,
            gate.registry,
            gate.policy,
            gate.provider,
            gate.stamp(self.agent),
            compile_statement=False,
            free_text_label=True,
            also_declared=KNOWLEDGE_PROPERTIES,
        )
        self.agent.grant.check_labels([plan.result.label])
        return plan.result.label, dict(plan.result.merge_keys)

    async def current(self, label: str, keys: dict[str, Any]) -> dict[str, Any] | None:
        """What the node holds now (its survivor's, when it is an alias); None when absent."""
        props = await self.gate.current_node(label, identity_key(keys))
        if props is not None and props.get(ALIAS_OF) is not None:
            survivor = await survivor_of(self.gate.reader.read, self.gate.registry, label, identity_key(keys))
            if survivor is not None:
                props = await self.gate.current_node(survivor.label, identity_key(survivor.keys))
        return props

    # -- entities -------------------------------------------------------------------------------------

    async def entity(self, parsed: Parsed, record: EntityRecord) -> None:
        values = record.values()
        try:
            request = self.node_request(record, values)
            label, keys = self.planned(request)
            current = await self.current(label, keys)
            action = entity_action(self.strategy, current is not None)
            if action == "merge":
                values = merged_values(current or {}, values)
                action = "overwrite" if values else "skip"
                request = request.model_copy(update={"properties": values})
            if action != "skip" and not self.dry_run:
                await self.gate.write_node(request, self.agent, free_text=True, also_declared=KNOWLEDGE_PROPERTIES)
        except GateRejection as exc:
            self.refused(parsed, "entity", exc)
            return
        self.by_name.setdefault(record.display_name, (label, keys))
        self.written.add((label, identity_key(keys)))
        if record.id:
            self.by_id[record.id] = (label, keys)
        counts = {"create": "entitiesCreated", "overwrite": "entitiesUpdated", "skip": "entitiesSkipped"}
        setattr(self.answer, counts[action], getattr(self.answer, counts[action]) + 1)

    async def refuse_existing(self, entities: list[tuple[Parsed, EntityRecord]]) -> None:
        """`fail`: before any write, every entity that exists; one is enough to refuse the whole import."""
        clashing = []
        for _parsed, record in entities:
            try:
                label, keys = self.planned(self.node_request(record, record.values()))
            except GateRejection:
                continue  # refused on its own when its turn comes
            if await self.current(label, keys) is not None:
                clashing.append(f"{label}:{identity_key(keys)}")
        if clashing:
            raise GateRejection(
                ErrorCode.IMPORT_CONFLICT,
                f"{len(clashing)} imported entities exist already and the strategy is fail: nothing was written",
                ids=clashing[:100],
                count=len(clashing),
            )

    # -- relations ------------------------------------------------------------------------------------

    async def endpoint(self, node_id: str | None, name: str | None) -> tuple[str, dict[str, Any]] | None:
        if node_id:
            return self.by_id.get(node_id) or split_id(node_id)
        if name is None:
            return None
        if name in self.by_name:
            return self.by_name[name]
        found = await self.gate.reader.find_by_names([name])
        hits = found.get(name)
        return (hits[0][1][0], {"name": name}) if hits else None

    async def relation(self, parsed: Parsed, record: RelationRecord) -> None:
        start = await self.endpoint(record.from_id, record.from_)
        end = await self.endpoint(record.to_id, record.to)
        if start is None or end is None:
            missing = "from" if start is None else "to"
            self.problem(parsed, "relation", ErrorCode.ENDPOINT_NOT_FOUND, f"its {missing} entity is not found")
            return
        source, method = record.claim()
        request = WriteRelationshipRequest(
            type=record.relationType,
            from_label=start[0],
            from_keys=start[1],
            to_label=end[0],
            to_keys=end[1],
            properties=record.data(),
            source=source or self.writer.source,
            extraction_method=method or self.writer.extraction_method,
            reliability=self.writer.reliability,
            weight=record.weight,
        )
        gate = self.gate
        try:
            plan = plan_relationship_write(
                request, gate.registry, gate.policy, gate.provider, gate.stamp(self.agent), free_text_type=True
            )
            self.agent.grant.check_types([plan.result.type])
            read = current_relationship(plan.result.type, plan.start.label, plan.end.label)
            [found] = await read_to_write(
                gate.backend, Statement(read.text, {"from_key": plan.start.key, "to_key": plan.end.key})
            )
            action = relation_action(self.strategy, found["props"] is not None)
            if self.dry_run:  # an endpoint this import would create counts as found
                ends = [
                    found[f"{side}_found"] or (ep.label, ep.key) in self.written
                    for side, ep in (("from", plan.start), ("to", plan.end))
                ]
                if not all(ends):
                    raise GateRejection(ErrorCode.ENDPOINT_NOT_FOUND, "an endpoint is not found")
            elif action != "skip":
                await gate.write_relationship(request, self.agent, free_text=True)
        except GateRejection as exc:
            self.refused(parsed, "relation", exc)
            return
        counts = {"create": "relationsCreated", "overwrite": "relationsUpdated", "skip": "relationsSkipped"}
        setattr(self.answer, counts[action], getattr(self.answer, counts[action]) + 1)


def _parent_links(
    entities: list[tuple[Parsed, EntityRecord]], hierarchy_type: str
) -> list[tuple[Parsed, RelationRecord]]:
    """memory-mcp's parentId: the hierarchy's relation (CHILD_OF unless renamed) from the entity to its parent."""
    return [
        (parsed, RelationRecord(from_=record.display_name, to=record.parentId, relationType=hierarchy_type))
        for parsed, record in entities
        if record.parentId
    ]


async def import_records(
    gate: Gate,
    items: list[Parsed],
    writer: WriterContext,
    agent: Agent,
    *,
    strategy: Strategy = "skip",
    dry_run: bool = False,
    progress: Progress = no_progress,
    every: int = 500,
    hierarchy_type: str = DEFAULT_HIERARCHY_TYPE,
) -> ImportAnswer:
    """Entities first (relations find their endpoints), each through the gate; every item gets an outcome.
    `fail` refuses the whole import (IMPORT_CONFLICT) before any write when an entity exists."""
    run = _Import(gate, writer, agent, strategy, dry_run)
    entities = [(p, p.record) for p in items if isinstance(p.record, EntityRecord)]
    relations = [(p, p.record) for p in items if isinstance(p.record, RelationRecord)]
    relations += _parent_links(entities, hierarchy_type)
    for parsed in items:
        if parsed.record is None:
            run.problem(parsed, "record", ErrorCode.INVALID_INPUT, parsed.problem or "not a record")
    if strategy == "fail":
        await run.refuse_existing(entities)
    total, done = len(entities) + len(relations), 0
    for parsed, record in entities:
        await run.entity(parsed, record)
        done += 1
        if done % every == 0:
            await progress(done, total)
    for parsed, link in relations:
        await run.relation(parsed, link)
        done += 1
        if done % every == 0:
            await progress(done, total)
    await progress(total, total)
    return run.answer

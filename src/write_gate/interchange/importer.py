"""import_graph and `write-gate import --format`: records (import_records.py) written through the gate, each as a
write_node / write_relationship would be (registry, grant, computed provenance, claims, history, the guarded
retry), under a merge strategy (core/import_merge.py) for what exists already.

A chunk of records is decided together: one read per label says which of its entities exist (one per type and
endpoint labels, which relations), and what it writes goes through the batch tools' path (services/batch.py:
one statement per chunk that decides and records each item as its single tool would). A record whose identity
the chunk has seen already, or that names an alias, is written on its own after the chunk, as before: it must
see what the one before it wrote, and an alias is followed to its survivor. A dry run writes nothing and reads
item by item."""

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

from write_gate.access.agents import Agent
from write_gate.core.cypher.aliases import ALIAS_OF
from write_gate.core.cypher.records import current_nodes, current_relationship, relationship_properties
from write_gate.core.cypher.statement import Statement
from write_gate.core.decisions import plan_node_write, plan_relationship_write
from write_gate.core.identity import identity_key
from write_gate.core.import_merge import Action, Strategy, entity_action, merged_values, relation_action
from write_gate.core.knowledge import DEFAULT_HIERARCHY_TYPE
from write_gate.core.knowledge import KNOWLEDGE_PROPERTIES as KNOWN_EVERYWHERE
from write_gate.core.model import ErrorCode, GateRejection, WriteNodeRequest, WriteRelationshipRequest
from write_gate.interchange.import_records import EntityRecord, Parsed, RelationRecord, split_id
from write_gate.services.aliases import survivor_of
from write_gate.services.batch import ItemOutcome, write_nodes, write_relationships
from write_gate.services.gate import Gate, read_to_write
from write_gate.services.memory import MEMORY_PROPERTIES, WriterContext
from write_gate.services.pipeline import chunks

# The values every label takes whatever its entry declares: the memory profile's observations, the knowledge
# tools' tags and importance (see import_records.values).
KNOWLEDGE_PROPERTIES = MEMORY_PROPERTIES | KNOWN_EVERYWHERE

Progress = Callable[[int, int], Awaitable[None]]
Counts = dict[str, str]
ENTITY_COUNTS: Counts = {"create": "entitiesCreated", "overwrite": "entitiesUpdated", "skip": "entitiesSkipped"}
RELATION_COUNTS: Counts = {"create": "relationsCreated", "overwrite": "relationsUpdated", "skip": "relationsSkipped"}


def _refusal(outcome: ItemOutcome) -> GateRejection:
    """A batch item's refusal, as its single tool would have raised it."""
    return GateRejection(
        outcome.error_code or ErrorCode.INVALID_INPUT, outcome.message or "", **(outcome.details or {})
    )


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
            if current is None and record.by_name_alone and (moved := await self.elsewhere_one(label, keys)):
                label, request = moved, request.model_copy(update={"label": moved})
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
        self.entity_done(record, label, keys, action)

    def entity_done(self, record: EntityRecord, label: str, keys: dict[str, Any], action: str) -> None:
        self.by_name.setdefault(record.display_name, (label, keys))
        self.written.add((label, identity_key(keys)))
        if record.id:
            self.by_id[record.id] = (label, keys)
        self.count(ENTITY_COUNTS, action)

    def count(self, counts: Counts, action: str) -> None:
        setattr(self.answer, counts[action], getattr(self.answer, counts[action]) + 1)

    def count_relation(self, parsed: Parsed, action: str) -> None:
        """A relation counted, but an entity's parentId (`_parent_links`: its item is the entity's): memory-mcp
        holds that in the entity, so its counts are the file's relations only."""
        if not isinstance(parsed.record, EntityRecord):
            self.count(RELATION_COUNTS, action)

    async def entities(self, chunk: list[tuple[Parsed, EntityRecord]]) -> None:
        """A chunk of entities: planned, one read per label of which exist, decided, written in one batch."""
        planned = []
        for parsed, record in chunk:
            try:
                request = self.node_request(record, record.values())
                label, keys = self.planned(request)
            except GateRejection as exc:
                self.refused(parsed, "entity", exc)
                continue
            planned.append((parsed, record, request, label, keys))
        current = await self.existing({(label, identity_key(keys)) for *_, label, keys in planned})
        absent = [
            (label, keys)
            for _, record, _, label, keys in planned
            if record.by_name_alone and (label, identity_key(keys)) not in current
        ]
        if moved := await self.elsewhere(absent):
            planned = [
                (parsed, record, request.model_copy(update={"label": moved[keys["name"]]}), moved[keys["name"]], keys)
                if record.by_name_alone and (label, identity_key(keys)) not in current and keys.get("name") in moved
                else (parsed, record, request, label, keys)
                for parsed, record, request, label, keys in planned
            ]
            current |= await self.existing({(label, identity_key(keys)) for *_, label, keys in planned})
        batch, alone, seen = [], [], set()
        for parsed, record, request, label, keys in planned:
            identity = (label, identity_key(keys))
            props = current.get(identity)
            if identity in seen or identity in self.written or (props is not None and props.get(ALIAS_OF) is not None):
                alone.append((parsed, record))  # after the batch: it sees what was written before it, or follows
                continue
            seen.add(identity)
            action = entity_action(self.strategy, props is not None)
            if action == "merge":
                values = merged_values(props or {}, request.properties)
                action = "overwrite" if values else "skip"
                request = request.model_copy(update={"properties": values})
            if action == "skip" or self.dry_run:
                self.entity_done(record, label, keys, action)
            else:
                batch.append((parsed, record, request, label, keys, action))
        if batch:
            requests = [item[2] for item in batch]
            answer = await write_nodes(
                self.gate, list(requests), self.agent, free_text=True, also_declared=KNOWLEDGE_PROPERTIES
            )
            for (parsed, record, _, label, keys, action), outcome in zip(batch, answer.items, strict=True):
                if outcome.status == "written":
                    self.entity_done(record, label, keys, action)
                else:
                    self.refused(parsed, "entity", _refusal(outcome))
        for parsed, record in alone:
            await self.entity(parsed, record)

    async def existing(self, identities: set[tuple[str, str]]) -> dict[tuple[str, str], dict[str, Any]]:
        """What each of these nodes (label, identity key) holds, for those that exist: one read per label."""
        by_label: dict[str, list[str]] = {}
        for label, key in identities:
            by_label.setdefault(label, []).append(key)
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for label, keys in by_label.items():
            rows = await read_to_write(self.gate.backend, Statement(current_nodes(label).text, {"keys": keys}))
            found.update({(label, row["key"]): row["props"] for row in rows})
        return found

    async def elsewhere(self, absent: list[tuple[str, dict[str, Any]]]) -> dict[str, str]:
        """For memory-mcp's entities (`EntityRecord.by_name_alone`) not under their own label: the label of a node of
        that name under another one (identified by its name alone too), by name. The entity is skipped, merged,
        replaced or refused as that node, which keeps its type (an import that created it again under its own made
        a second entity of one name, which memory-mcp and the memory profile never hold)."""
        names = {keys["name"] for _label, keys in absent if set(keys) == {"name"} and isinstance(keys["name"], str)}
        if not names:
            return {}
        by_name = set(self.gate.reader.name_scope().keyed_by_name)
        found = await self.gate.reader.find_by_names(names)
        return {name: labels[0] for name, hits in found.items() for _id, labels in hits[:1] if labels[0] in by_name}

    async def elsewhere_one(self, label: str, keys: dict[str, Any]) -> str | None:
        return (await self.elsewhere([(label, keys)])).get(str(keys.get("name")))

    async def refuse_existing(self, entities: list[tuple[Parsed, EntityRecord]]) -> None:
        """`fail`: before any write, every entity that exists; one is enough to refuse the whole import."""
        clashing = []
        for _parsed, record in entities:
            try:
                label, keys = self.planned(self.node_request(record, record.values()))
            except GateRejection:
                continue  # refused on its own when its turn comes
            if await self.current(label, keys) is None and record.by_name_alone:
                label = await self.elsewhere_one(label, keys) or ""
            if label and await self.current(label, keys) is not None:
                clashing.append(f"{label}:{identity_key(keys)}")
        clashing = list(dict.fromkeys(clashing))  # an entity the file names twice exists once
        if clashing:
            raise GateRejection(
                ErrorCode.IMPORT_CONFLICT,
                f"{len(clashing)} imported entities exist already and the strategy is fail: nothing was written",
                ids=clashing[:100],
                count=len(clashing),
            )

    # -- relations ------------------------------------------------------------------------------------

    async def endpoint(self, node_id: str | None, name: str | None) -> tuple[str, dict[str, Any]] | None:
        unknown = not node_id and name is not None and name not in self.by_name
        found = await self.gate.reader.find_by_names([name]) if unknown and name is not None else {}
        return self.known_endpoint(node_id, name, found)

    def relationship_request(
        self, record: RelationRecord, start: tuple[str, dict[str, Any]], end: tuple[str, dict[str, Any]]
    ) -> WriteRelationshipRequest:
        source, method = record.claim()
        return WriteRelationshipRequest(
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

    async def relation(self, parsed: Parsed, record: RelationRecord) -> None:
        start = await self.endpoint(record.from_id, record.from_)
        end = await self.endpoint(record.to_id, record.to)
        if start is None or end is None:
            missing = "from" if start is None else "to"
            self.problem(parsed, "relation", ErrorCode.ENDPOINT_NOT_FOUND, f"its {missing} entity is not found")
            return
        request = self.relationship_request(record, start, end)
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
            if action == "merge":
                action, request = _merged_relation(found["props"] or {}, request)
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
        self.count_relation(parsed, action)

    async def relations(self, chunk: list[tuple[Parsed, RelationRecord]]) -> None:
        """A chunk of relations: endpoints found (names this file does not give looked up at once), planned, one
        read per type and endpoint labels of which exist, decided, written in one batch."""
        unknown = {
            name
            for _, record in chunk
            for node_id, name in ((record.from_id, record.from_), (record.to_id, record.to))
            if not node_id and name is not None and name not in self.by_name
        }
        found = await self.gate.reader.find_by_names(unknown) if unknown else {}
        gate, planned = self.gate, []
        for parsed, record in chunk:
            ends = [
                self.known_endpoint(node_id, name, found)
                for node_id, name in ((record.from_id, record.from_), (record.to_id, record.to))
            ]
            if ends[0] is None or ends[1] is None:
                missing = "from" if ends[0] is None else "to"
                self.problem(parsed, "relation", ErrorCode.ENDPOINT_NOT_FOUND, f"its {missing} entity is not found")
                continue
            request = self.relationship_request(record, ends[0], ends[1])
            try:
                plan = plan_relationship_write(
                    request, gate.registry, gate.policy, gate.provider, gate.stamp(self.agent), free_text_type=True
                )
                self.agent.grant.check_types([plan.result.type])
            except GateRejection as exc:
                self.refused(parsed, "relation", exc)
                continue
            planned.append(
                (
                    parsed,
                    record,
                    request,
                    (plan.result.type, plan.start.label, plan.end.label),
                    (plan.start.key, plan.end.key),
                )
            )
        related = await self.related({(shape, keys) for *_, shape, keys in planned})
        batch, alone, seen = [], [], set()
        for parsed, record, request, shape, keys in planned:
            if (shape, keys) in seen:
                alone.append((parsed, record))  # after the batch: it sees what the one before it wrote
                continue
            seen.add((shape, keys))
            action = relation_action(self.strategy, (shape, keys) in related)
            if action == "merge":
                action, request = _merged_relation(related[(shape, keys)], request)
            if action == "skip":
                self.count_relation(parsed, action)
            else:
                batch.append((parsed, request, action))
        if batch:
            answer = await write_relationships(gate, [item[1] for item in batch], self.agent, free_text=True)
            for (parsed, _, action), outcome in zip(batch, answer.items, strict=True):
                if outcome.status == "written":
                    self.count_relation(parsed, action)
                else:
                    self.refused(parsed, "relation", _refusal(outcome))
        for parsed, record in alone:
            await self.relation(parsed, record)

    def known_endpoint(
        self, node_id: str | None, name: str | None, found: dict[str, list[tuple[int, list[str]]]]
    ) -> tuple[str, dict[str, Any]] | None:
        """By the id the file gives it, by a name this file's entities have, or by a name `found` looked up."""
        if node_id:
            return self.by_id.get(node_id) or split_id(node_id)
        if name is None:
            return None
        if name in self.by_name:
            return self.by_name[name]
        hits = found.get(name)
        return (hits[0][1][0], {"name": name}) if hits else None

    async def related(
        self, wanted: set[tuple[tuple[str, str, str], tuple[str, str]]]
    ) -> dict[tuple[tuple[str, str, str], tuple[str, str]], dict[str, Any]]:
        """Those of these (type and endpoint labels, endpoint keys) that have their relationship, each with what it
        holds (for a merge): one read per shape."""
        by_shape: dict[tuple[str, str, str], list[dict[str, str]]] = {}
        for shape, (from_key, to_key) in wanted:
            by_shape.setdefault(shape, []).append({"from_key": from_key, "to_key": to_key})
        have: dict[tuple[tuple[str, str, str], tuple[str, str]], dict[str, Any]] = {}
        for shape, pairs in by_shape.items():
            read = relationship_properties(*shape)
            rows = await read_to_write(self.gate.backend, Statement(read.text, {"pairs": pairs}))
            for row in rows:
                have.setdefault((shape, (row["from_key"], row["to_key"])), row["props"] or {})
        return have


def _merged_relation(
    current: dict[str, Any], request: WriteRelationshipRequest
) -> tuple[Action, WriteRelationshipRequest]:
    """A merge of a relation that exists: written as given where it changes a value (its properties, its weight),
    skipped where it changes none (memory-mcp's relation, its ends and type, matches the one there)."""
    changes = any(current.get(name) != value for name, value in request.properties.items())
    if changes or (request.weight is not None and current.get("weight") != request.weight):
        return "overwrite", request
    return "skip", request


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
    for chunk in chunks(entities, every):
        await run.entities(chunk)
        done += len(chunk)
        await progress(done, total)
    for rchunk in chunks(relations, every):
        if dry_run:  # nothing written: each relation's endpoints checked as it is read
            for parsed, record in rchunk:
                await run.relation(parsed, record)
        else:
            await run.relations(rchunk)
        done += len(rchunk)
        await progress(done, total)
    if not total:
        await progress(0, 0)
    return run.answer

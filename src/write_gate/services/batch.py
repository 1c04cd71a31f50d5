"""`write_nodes` and `write_relationships`: many items in one call, each checked like its single-item tool,
the valid ones written with one UNWIND statement per label (or relationship type and endpoint shape) and
chunk of items, each chunk's rows built while the engine writes the one before (services/pipeline.py), each
statement deciding its rows as write_node's does (core/cypher/deciding_writes.py: what the write shares, its
provenance stamp, sent once per chunk), and an outcome for every item in input order. An item that meets
another writer's value, or names an alias, is written as its single tool writes it."""

import functools
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidatorFunctionWrapHandler, WrapValidator

from write_gate.access.agents import Agent
from write_gate.core.cypher.deciding_writes import (
    node_values,
    node_write,
    relationship_values,
    relationship_write,
    restamp_node_row,
    restamp_relationship_row,
    stamp_params,
)
from write_gate.core.cypher.statement import Provenance, Statement
from write_gate.core.decisions import NodePlan, RelationshipPlan, plan_node_write, plan_relationship_write
from write_gate.core.identity import identity_key, label_fold
from write_gate.core.model import (
    ConflictMet,
    ErrorCode,
    GateRejection,
    NodeWritten,
    RelationshipWritten,
    WriteNodeRequest,
    WriteRelationshipRequest,
    validation_problems,
)
from write_gate.services.call_stamps import CallStamp
from write_gate.services.embeddings import Subject as Embedded
from write_gate.services.gate import Gate, new_id, run_write
from write_gate.services.grant_checks import check_relationship_write
from write_gate.services.pipeline import collector_paused, pipelined


def _each_on_its_own(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """An item that does not validate is kept as its ValidationError, to be that item's rejection: one bad
    item does not sink the others."""
    try:
        return handler(value)
    except ValidationError as exc:
        return exc


# An item of a batch: validated by, and advertised as, the single tool's model. At run time an item that
# failed holds its ValidationError instead (see `checked`).
EachOnItsOwn = WrapValidator(_each_on_its_own)


class WriteNodesRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    items: list[Annotated[WriteNodeRequest, EachOnItsOwn]] = Field(description="Each item is what write_node takes.")


class WriteRelationshipsRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    items: list[Annotated[WriteRelationshipRequest, EachOnItsOwn]] = Field(
        description="Each item is what write_relationship takes."
    )


def checked[T: BaseModel](items: list[T]) -> list[T | ValidationError]:
    """A batch's items as they are at run time: each the item's model, or why it is not one."""
    return cast(list[T | ValidationError], items)


def _absent(value: Any) -> bool:
    return value is None


# An item answers what it has, as the single tools answer: a written item no error fields, a rejected one no
# write's, neither a null (each item carried about ten; found by a black-box audit).
_Omitted = Field(default=None, exclude_if=_absent)


class ItemOutcome(BaseModel):
    index: int
    status: Literal["written", "rejected"]
    label: str | None = _Omitted  # the node label, or the relationship type
    merge_keys: dict[str, Any] | None = _Omitted
    confidence: float | None = _Omitted
    remapped_from: str | None = _Omitted
    property_remaps: list[str] | None = _Omitted
    weight: float | None = _Omitted
    stub_endpoints: list[str] | None = _Omitted
    conflicts: list[ConflictMet] | None = _Omitted  # as the single tool's answer lists them
    error_code: ErrorCode | None = _Omitted
    message: str | None = _Omitted
    details: dict[str, Any] | None = _Omitted


class BatchWritten(BaseModel):
    status: Literal["done"] = "done"
    written: int
    rejected: int
    write_gate_version: str
    items: list[ItemOutcome]


def _rejected(index: int, exc: GateRejection | ValidationError, single_tool: str = "write_node") -> ItemOutcome:
    """An item refused, as `single_tool` (the tool each item is a call of) would have refused it."""
    if isinstance(exc, ValidationError):
        problems = validation_problems(exc)
        return ItemOutcome(
            index=index,
            status="rejected",
            error_code=ErrorCode.INVALID_INPUT,
            message=f"the item does not match {single_tool}'s input schema",
            details={"problems": problems},
        )
    r = exc.rejected
    return ItemOutcome(index=index, status="rejected", error_code=r.error_code, message=r.message, details=r.details)


def in_creation_order[T](gate: Gate, rows: list[T]) -> list[T]:
    """A batch statement's rows in the order that lists what it creates as given (Dialect.merges_in_reverse): its
    answers are matched to the items by each row's `i`, not by place."""
    return rows[::-1] if gate.backend.dialect.merges_in_reverse else rows


def _waves[T](rows: list[T], identity: Callable[[T], Any]) -> list[list[T]]:
    """Rows in statements that hold each identity once: a key written twice in one batch is written twice,
    in input order, as two single calls would (within one UNWIND the engine's order is not guaranteed)."""
    if len({identity(row) for row in rows}) == len(rows):
        return [rows]  # the usual case: no key repeats
    waves: list[list[T]] = []
    seen: dict[Any, int] = defaultdict(int)
    for row in rows:
        key = identity(row)
        if seen[key] == len(waves):
            waves.append([])
        waves[seen[key]].append(row)
        seen[key] += 1
    return waves


def _summary(gate: Gate, outcomes: list[ItemOutcome | None]) -> BatchWritten:
    """The batch's answer; a rejection of the whole call where the engine failed every item (a client that reads
    only isError must not take that for a batch written)."""
    items = [o for o in outcomes if o is not None]
    written = sum(o.status == "written" for o in items)
    if items and all(o.error_code is ErrorCode.BACKEND_UNAVAILABLE for o in items):
        unknown = any((o.details or {}).get("applied") == "unknown" for o in items)
        raise GateRejection(
            ErrorCode.BACKEND_UNAVAILABLE,
            "the graph engine failed every item: nothing was written" + (" that is known" if unknown else ""),
            applied="unknown" if unknown else False,
            items=[o.model_dump(mode="json", exclude_none=True) for o in items],
        )
    return BatchWritten(written=written, rejected=len(items) - written, write_gate_version=gate.version, items=items)


@dataclass
class _Chunk:
    """A chunk's statement, ready to run, and what each of its items answers once it lands."""

    statement: Statement
    answers: Mapping[int, Callable[[Mapping[str, Any]], ItemOutcome]]
    stamped: str  # the stamp its rows carry
    restamp: Callable[[str], "_Chunk"]  # the same chunk stamped again, at this stamp (it aged meanwhile)
    # What its items write that is embedded (embeddings on): one provider call per chunk, in its statement.
    embedded: Sequence[Embedded] = ()


async def write_nodes(
    gate: Gate,
    items: list[WriteNodeRequest | ValidationError],
    agent: Agent,
    *,
    free_text: bool = False,
    also_declared: frozenset[str] = frozenset(),
) -> BatchWritten:
    """`free_text` and `also_declared` as plan_node_write takes them (an import of memory files)."""
    if not free_text:
        await gate.learn_names(item.label for item in items if not isinstance(item, ValidationError))
    stamps = gate.call_stamp(agent)
    stamp = stamps.current()
    outcomes: list[ItemOutcome | None] = [None] * len(items)
    groups: dict[str, list[_PlannedNode]] = defaultdict(list)
    with collector_paused():
        for i, request in enumerate(items):
            try:
                if isinstance(request, ValidationError):
                    raise request
                plan = plan_node_write(
                    request,
                    gate.registry,
                    gate.policy,
                    gate.provider,
                    stamp,
                    free_text_label=free_text,
                    also_declared=also_declared,
                )
                agent.grant.check_labels([plan.result.label])
            except (GateRejection, ValidationError) as exc:
                outcomes[i] = _rejected(i, exc)
                continue
            groups[plan.result.label].append(_PlannedNode(i, plan, identity_key(plan.result.merge_keys)))
    for label, planned in groups.items():
        text = node_write(label, remapped=False, batch=True, dialect=gate.backend.dialect)
        for wave in _waves(planned, lambda item: item.key):
            await _write_node_wave(gate, label, text, wave, outcomes, stamps)
            # An item that did not land names an alias, or met another writer's value: written as write_node
            # writes it (to the survivor; decided under the conflict policies).
            for item in wave:
                if outcomes[item.i] is None:
                    request = cast(WriteNodeRequest, items[item.i])
                    outcomes[item.i] = await _one_node(gate, item.i, request, agent, free_text, also_declared)
    return _summary(gate, outcomes)


@dataclass(frozen=True)
class _PlannedNode:
    i: int
    plan: NodePlan
    key: str  # its identity key


class _Provenances:
    """A chunk's table of provenance stamps (most batches have one), each row naming its own by position, all
    stamped at `now`, the call's stamp as the chunk is made (services/call_stamps.py)."""

    def __init__(self, now: str) -> None:
        self.now = now
        self.table: list[dict[str, Any]] = []
        self._index: dict[Provenance, int] = {}
        self._restamped: dict[Provenance, Provenance] = {}

    def restamped(self, planned: Provenance) -> Provenance:
        """A plan's provenance at the chunk's stamp."""
        provenance = self._restamped.get(planned)
        if provenance is None:
            provenance = self._restamped[planned] = planned.restamped(self.now)
        return provenance

    def of(self, provenance: Provenance) -> int:
        index = self._index.get(provenance)
        if index is None:
            index = self._index[provenance] = len(self.table)
            self.table.append(stamp_params(provenance))
        return index


async def _write_node_wave(
    gate: Gate,
    label: str,
    text: str,
    wave: list[_PlannedNode],
    outcomes: list[ItemOutcome | None],
    stamps: CallStamp,
) -> None:
    """Chunk by chunk, each item's row built while the engine writes the chunk before, each chunk one statement
    that decides and writes every row it can (core/cypher/deciding_writes.py). An item's outcome is set when it
    is written, left None when it did not land (it names an alias, or met another writer's value)."""
    shared = {"label_fold": label_fold(label, None)}

    def prepare(chunk: list[_PlannedNode]) -> _Chunk | None:
        rows, answers, provenances, embedded = [], {}, _Provenances(stamps.current().now), []
        for n in chunk:
            plan, result = n.plan, n.plan.result
            provenance = provenances.restamped(plan.provenance)
            row = node_values(
                label,
                result.merge_keys,
                plan.properties,
                provenance,
                result.remapped_from,
                result.property_remaps,
                new_id(),
                batch=True,
            )
            if gate.embeddings is not None:
                embedded.append(Embedded(label, row["key"], {**result.merge_keys, **plan.properties}))
            row["i"], row["p"] = n.i, provenances.of(provenance)
            rows.append(row)
            answers[n.i] = functools.partial(_node_answer, n.i, result)
        if not rows:
            return None

        def restamp(now: str) -> _Chunk:
            again = _Provenances(now)
            for n, row in zip(chunk, rows, strict=True):
                provenance = again.restamped(n.plan.provenance)
                restamp_node_row(row, n.plan.result.merge_keys, n.plan.properties, provenance)
                row["p"] = again.of(provenance)
            return made(again)

        def made(provenances: _Provenances) -> _Chunk:
            params = {**shared, "rows": in_creation_order(gate, rows), "provenances": provenances.table}
            return _Chunk(Statement(text, params), answers, provenances.now, restamp, embedded)

        return made(provenances)

    await pipelined(wave, prepare, lambda chunk: _land(gate, chunk, outcomes, stamps))


async def _land(gate: Gate, chunk: _Chunk, outcomes: list[ItemOutcome | None], stamps: CallStamp) -> None:
    """Run a chunk's statement; each row it returns is an item written. The statement is atomic: if the engine
    refuses it, none of its items was written, and each is refused with the engine's answer (which says
    `applied: "unknown"` where the engine went away after the statement reached it). A chunk made while the
    engine was slow over the one before is stamped again first (services/call_stamps.py)."""
    if (now := stamps.current().now) != chunk.stamped:
        chunk = chunk.restamp(now)
    try:
        statement = chunk.statement
        if gate.embeddings is not None and chunk.embedded:
            statement = await gate.embeddings.lead(statement, gate.registry, chunk.embedded)
        returned = await run_write(gate.backend, statement)
    except GateRejection as exc:
        _refuse_all(chunk.answers, exc, outcomes)
        return
    for row in returned:
        if row["written"]:  # else it met another writer's value: left to the single tool's path
            outcomes[row["i"]] = chunk.answers[row["i"]](row)


def _node_answer(i: int, result: NodeWritten, _row: Mapping[str, Any]) -> ItemOutcome:
    return _node_written(i, result, [])


async def _one_node(
    gate: Gate,
    i: int,
    request: WriteNodeRequest,
    agent: Agent,
    free_text: bool = False,
    also_declared: frozenset[str] = frozenset(),
) -> ItemOutcome:
    try:
        result = await gate.write_node(request, agent, free_text=free_text, also_declared=also_declared)
    except GateRejection as exc:
        return _rejected(i, exc)
    return _node_written(i, result, result.conflicts)


async def _one_relationship(
    gate: Gate, i: int, request: WriteRelationshipRequest, agent: Agent, free_text: bool = False
) -> ItemOutcome:
    try:
        result = await gate.write_relationship(request, agent, free_text=free_text)
    except GateRejection as exc:
        return _rejected(i, exc)
    return _relationship_written(i, result)


def _refuse_all(indexes: Iterable[int], exc: GateRejection, outcomes: list[ItemOutcome | None]) -> None:
    """A read or statement that serves many items failed: each of them is refused with its answer."""
    for i in indexes:
        outcomes[i] = _rejected(i, exc)


def _node_written(i: int, result: NodeWritten, conflicts: list[ConflictMet]) -> ItemOutcome:
    """An item written, as its single tool would have answered it (batched, or redirected past an alias)."""
    return ItemOutcome(
        index=i,
        status="written",
        label=result.label,
        merge_keys=result.merge_keys,
        confidence=result.confidence,
        remapped_from=result.remapped_from,
        property_remaps=result.property_remaps or None,
        conflicts=conflicts or None,
    )


def _relationship_written(i: int, result: RelationshipWritten) -> ItemOutcome:
    return ItemOutcome(
        index=i,
        status="written",
        label=result.type,
        confidence=result.confidence,
        remapped_from=result.remapped_from,
        property_remaps=result.property_remaps or None,
        weight=result.weight,
        stub_endpoints=list(result.stub_endpoints) or None,
        conflicts=result.conflicts or None,
    )


async def write_relationships(
    gate: Gate, items: list[WriteRelationshipRequest | ValidationError], agent: Agent, *, free_text: bool = False
) -> BatchWritten:
    """`free_text`: types are any text (an import of memory files), as plan_relationship_write takes it."""
    if not free_text:
        given = [item for item in items if not isinstance(item, ValidationError)]
        await gate.learn_names(
            [end for item in given for end in (item.from_label, item.to_label)], [item.type for item in given]
        )
    stamps = gate.call_stamp(agent)
    stamp = stamps.current()
    outcomes: list[ItemOutcome | None] = [None] * len(items)
    groups: dict[tuple[str, str, str, bool], list[_PlannedRelationship]] = defaultdict(list)
    alone: list[int] = []
    with collector_paused():
        for i, request in enumerate(items):
            try:
                if isinstance(request, ValidationError):
                    raise request
                plan = plan_relationship_write(
                    request, gate.registry, gate.policy, gate.provider, stamp, free_text_type=free_text
                )
                ends = [plan.start.label, plan.end.label]
                check_relationship_write(agent.grant, [plan.result.type], ends, plan.merge_endpoints)
            except (GateRejection, ValidationError) as exc:
                outcomes[i] = _rejected(i, exc, "write_relationship")
                continue
            if plan.result.type == gate.policy.hierarchy_type:
                alone.append(i)  # checked in its own statement: one parent, no cycle (services/hierarchy_rule.py)
                continue
            shape = (plan.result.type, plan.start.label, plan.end.label, plan.merge_endpoints)
            groups[shape].append(_PlannedRelationship(i, plan, (plan.start.key, plan.end.key), request.weight))
    for i in alone:
        outcomes[i] = await _one_relationship(gate, i, cast(WriteRelationshipRequest, items[i]), agent, free_text)
    for shape, planned in groups.items():
        for wave in _waves(planned, lambda item: item.keys):
            await _write_relationship_wave(gate, shape, wave, outcomes, stamps)
            # An item that did not land lacks an endpoint, names an alias, or its relationship moved since it
            # was read: written as write_relationship writes it (which says which, or writes past the alias).
            for item in wave:
                if outcomes[item.i] is None:
                    request = cast(WriteRelationshipRequest, items[item.i])
                    outcomes[item.i] = await _one_relationship(gate, item.i, request, agent, free_text)
    return _summary(gate, outcomes)


@dataclass(frozen=True)
class _PlannedRelationship:
    i: int
    plan: RelationshipPlan
    keys: tuple[str, str]  # its endpoints' identity keys
    weight: float | None


async def _write_relationship_wave(
    gate: Gate,
    shape: tuple[str, str, str, bool],
    wave: list[_PlannedRelationship],
    outcomes: list[ItemOutcome | None],
    stamps: CallStamp,
) -> None:
    """As `_write_node_wave`, for relationships of one type and endpoint shape."""
    type_, from_label, to_label, merge_endpoints = shape
    text = relationship_write(type_, from_label, to_label, merge_endpoints, remapped=False, batch=True)

    def prepare(chunk: list[_PlannedRelationship]) -> _Chunk | None:
        rows, answers, provenances = [], {}, _Provenances(stamps.current().now)
        for r in chunk:
            plan = r.plan
            provenance = provenances.restamped(plan.provenance)
            row = relationship_values(
                plan.start,
                plan.end,
                merge_endpoints,
                plan.properties,
                provenance,
                r.weight,
                plan.result.remapped_from,
                plan.property_remaps,
                new_id(),
                batch=True,
            )
            row["i"], row["p"] = r.i, provenances.of(provenance)
            rows.append(row)
            answers[r.i] = functools.partial(_relationship_answer, r.i, plan.result)
        if not rows:
            return None

        def restamp(now: str) -> _Chunk:
            again = _Provenances(now)
            for r, row in zip(chunk, rows, strict=True):
                plan = r.plan
                provenance = again.restamped(plan.provenance)
                restamp_relationship_row(row, plan.start, plan.end, merge_endpoints, plan.properties, provenance)
                row["p"] = again.of(provenance)
            return made(again)

        def made(provenances: _Provenances) -> _Chunk:
            params = {"rows": in_creation_order(gate, rows), "provenances": provenances.table}
            return _Chunk(Statement(text, params), answers, provenances.now, restamp)

        return made(provenances)

    await pipelined(wave, prepare, lambda chunk: _land(gate, chunk, outcomes, stamps))


def _relationship_answer(i: int, result: RelationshipWritten, row: Mapping[str, Any]) -> ItemOutcome:
    stubs = [side for side in ("from", "to") if row[f"{side}_stub"]]
    return _relationship_written(i, result.model_copy(update={"weight": row["weight"], "stub_endpoints": stubs}))

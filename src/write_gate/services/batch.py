"""`write_nodes` and `write_relationships`: many items in one call, each checked like its single-item tool,
the valid ones written in one UNWIND statement per label (or relationship type and endpoint shape), and
an outcome for every item in input order."""

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidatorFunctionWrapHandler, WrapValidator

from write_gate.access.agents import Agent
from write_gate.core.cypher.aliases import ALIAS_OF
from write_gate.core.cypher.batch_writes import write_nodes_batch, write_relationships_batch
from write_gate.core.cypher.clauses import (
    identity_properties,
    property_breadcrumb,
    relationship_properties,
    stub_properties,
    written_properties,
)
from write_gate.core.cypher.records import current_nodes, current_relationships
from write_gate.core.cypher.statement import Statement
from write_gate.core.decisions import NodePlan, RelationshipPlan, plan_node_write, plan_relationship_write
from write_gate.core.history import Subject
from write_gate.core.identity import identity_key
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
from write_gate.services.gate import Gate, Planned, read_to_write, run_write


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


class ItemOutcome(BaseModel):
    index: int
    status: Literal["written", "rejected"]
    label: str | None = None  # the node label, or the relationship type
    merge_keys: dict[str, Any] | None = None
    confidence: float | None = None
    remapped_from: str | None = None
    property_remaps: list[str] | None = None
    weight: float | None = None
    stub_endpoints: list[str] | None = None
    conflicts: list[ConflictMet] | None = None  # as the single tool's answer lists them
    error_code: ErrorCode | None = None
    message: str | None = None
    details: dict[str, Any] | None = None


class BatchWritten(BaseModel):
    status: Literal["done"] = "done"
    written: int
    rejected: int
    write_gate_version: str
    items: list[ItemOutcome]


def _rejected(index: int, exc: GateRejection | ValidationError) -> ItemOutcome:
    if isinstance(exc, ValidationError):
        problems = validation_problems(exc)
        return ItemOutcome(
            index=index,
            status="rejected",
            error_code=ErrorCode.INVALID_INPUT,
            message="the item does not match write_node's input schema",
            details={"problems": problems},
        )
    r = exc.rejected
    return ItemOutcome(index=index, status="rejected", error_code=r.error_code, message=r.message, details=r.details)


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
    items = [o for o in outcomes if o is not None]
    written = sum(o.status == "written" for o in items)
    return BatchWritten(written=written, rejected=len(items) - written, write_gate_version=gate.version, items=items)


async def write_nodes(gate: Gate, items: list[WriteNodeRequest | ValidationError], agent: Agent) -> BatchWritten:
    stamp = gate.stamp(agent)
    outcomes: list[ItemOutcome | None] = [None] * len(items)
    groups: dict[str, list[tuple[int, NodePlan]]] = defaultdict(list)
    for i, request in enumerate(items):
        try:
            if isinstance(request, ValidationError):
                raise request
            plan = plan_node_write(request, gate.registry, gate.policy, gate.provider, stamp, compile_statement=False)
            agent.grant.check_labels([plan.result.label])
        except (GateRejection, ValidationError) as exc:
            outcomes[i] = _rejected(i, exc)
            continue
        groups[plan.result.label].append((i, plan))
    for label, planned in groups.items():
        text = write_nodes_batch(label)
        for wave in _waves(planned, lambda item: identity_key(item[1].result.merge_keys)):
            await _write_node_wave(gate, label, text, wave, outcomes)
            # An item that did not land names an alias, or its node moved since it was read: written as
            # write_node writes it (to the survivor; read and decided again).
            for i, _plan in wave:
                if outcomes[i] is None:
                    outcomes[i] = await _one_node(gate, i, cast(WriteNodeRequest, items[i]), agent)
    return _summary(gate, outcomes)


async def _write_node_wave(
    gate: Gate, label: str, text: str, wave: list[tuple[int, NodePlan]], outcomes: list[ItemOutcome | None]
) -> None:
    """Read the wave's nodes, decide each item under the conflict policies, write them guarded in one
    statement; an item's outcome is set when it is written or rejected, left None when it did not land."""
    keys = [identity_key(plan.result.merge_keys) for _, plan in wave]
    try:
        found = await read_to_write(gate.backend, Statement(current_nodes(label).text, {"keys": keys}))
    except GateRejection as exc:
        _refuse_all((i for i, _plan in wave), exc, outcomes)
        return
    current = {row["key"]: row["props"] for row in found}
    entry = gate.registry.get_entry(label)
    rows, results = [], {}
    for (i, plan), key in zip(wave, keys, strict=True):
        props = current.get(key)
        if props is not None and props.get(ALIAS_OF) is not None:
            continue  # left to write_node, which follows the alias
        result = plan.result
        try:
            guarded = gate.guard(
                Subject.node(label, key), entry, props, Planned(plan.properties, result.merge_keys, plan.provenance)
            )
        except GateRejection as exc:
            outcomes[i] = _rejected(i, exc)
            continue
        rows.append(
            {
                "i": i,
                "key": key,
                "identity": identity_properties(label, result.merge_keys, plan.provenance),
                "properties": written_properties(
                    label, guarded.write, result.remapped_from, plan.provenance, result.property_remaps
                ),
                "remapped_from": result.remapped_from,
                **plan.provenance.params(),
                **guarded.as_guard(props is None).params(),
            }
        )
        results[i] = result.model_copy(update={"conflicts": guarded.met})
    if not rows:
        return
    try:
        landed = {row["i"] for row in await run_write(gate.backend, Statement(text, {"rows": rows}))}
    except GateRejection as exc:  # the statement is atomic: none of its rows was written
        _refuse_all((row["i"] for row in rows), exc, outcomes)
        return
    for i in landed:
        outcomes[i] = _node_written(i, results[i])


async def _one_node(gate: Gate, i: int, request: WriteNodeRequest, agent: Agent) -> ItemOutcome:
    try:
        result = await gate.write_node(request, agent)
    except GateRejection as exc:
        return _rejected(i, exc)
    return _node_written(i, result)


async def _one_relationship(gate: Gate, i: int, request: WriteRelationshipRequest, agent: Agent) -> ItemOutcome:
    try:
        result = await gate.write_relationship(request, agent)
    except GateRejection as exc:
        return _rejected(i, exc)
    return _relationship_written(i, result)


def _refuse_all(indexes: Iterable[int], exc: GateRejection, outcomes: list[ItemOutcome | None]) -> None:
    """A read or statement that serves many items failed: each of them is refused with its answer."""
    for i in indexes:
        outcomes[i] = _rejected(i, exc)


def _node_written(i: int, result: NodeWritten) -> ItemOutcome:
    """An item written, as its single tool would have answered it (batched, or redirected past an alias)."""
    return ItemOutcome(
        index=i,
        status="written",
        label=result.label,
        merge_keys=result.merge_keys,
        confidence=result.confidence,
        remapped_from=result.remapped_from,
        property_remaps=result.property_remaps or None,
        conflicts=result.conflicts or None,
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
        stub_endpoints=list(result.stub_endpoints),
        conflicts=result.conflicts or None,
    )


async def write_relationships(
    gate: Gate, items: list[WriteRelationshipRequest | ValidationError], agent: Agent
) -> BatchWritten:
    stamp = gate.stamp(agent)
    outcomes: list[ItemOutcome | None] = [None] * len(items)
    groups: dict[tuple[Any, ...], list[tuple[int, RelationshipPlan]]] = defaultdict(list)
    for i, request in enumerate(items):
        try:
            if isinstance(request, ValidationError):
                raise request
            plan = plan_relationship_write(request, gate.registry, gate.policy, gate.provider, stamp)
            agent.grant.check_types([plan.result.type])
            if plan.merge_endpoints:
                agent.grant.check_labels([plan.start.label, plan.end.label])
        except (GateRejection, ValidationError) as exc:
            outcomes[i] = _rejected(i, exc)
            continue
        groups[(plan.result.type, plan.start.label, plan.end.label, plan.merge_endpoints)].append((i, plan))
    for shape, planned in groups.items():
        for wave in _waves(planned, lambda item: (item[1].start.key, item[1].end.key)):
            await _write_relationship_wave(gate, shape, wave, items, outcomes)
            # An item that did not land lacks an endpoint, names an alias, or its relationship moved since it
            # was read: written as write_relationship writes it (which says which, or writes past the alias).
            for i, _plan in wave:
                if outcomes[i] is None:
                    outcomes[i] = await _one_relationship(gate, i, cast(WriteRelationshipRequest, items[i]), agent)
    return _summary(gate, outcomes)


async def _write_relationship_wave(
    gate: Gate,
    shape: tuple[str, str, str, bool],
    wave: list[tuple[int, RelationshipPlan]],
    items: list[WriteRelationshipRequest | ValidationError],
    outcomes: list[ItemOutcome | None],
) -> None:
    """As `_write_node_wave`, for relationships of one type and endpoint shape."""
    type_, from_label, to_label, merge_endpoints = shape
    pairs = [{"from_key": plan.start.key, "to_key": plan.end.key} for _, plan in wave]
    try:
        read = current_relationships(type_, from_label, to_label)
        found = await read_to_write(gate.backend, Statement(read.text, {"pairs": pairs}))
    except GateRejection as exc:
        _refuse_all((i for i, _plan in wave), exc, outcomes)
        return
    current = {(row["from_key"], row["to_key"]): row["props"] for row in found}
    entry = gate.registry.get_relationship(type_)
    rows, results = [], {}
    for i, plan in wave:
        start, end, result = plan.start, plan.end, plan.result
        props = current.get((start.key, end.key))
        subject = Subject.relationship(type_, from_label, start.key, to_label, end.key)
        try:
            guarded = gate.guard(subject, entry, props, Planned(plan.properties, {}, plan.provenance))
        except GateRejection as exc:
            outcomes[i] = _rejected(i, exc)
            continue
        row: dict[str, Any] = {"i": i, "from_key": start.key, "to_key": end.key}
        if merge_endpoints:
            row["from_stub"] = stub_properties(from_label, start.keys, plan.provenance)
            row["to_stub"] = stub_properties(to_label, end.keys, plan.provenance)
        rows.append(
            {
                **row,
                "properties": {
                    **relationship_properties(guarded.write, plan.provenance),
                    **property_breadcrumb(plan.property_remaps),
                },
                "weight": cast(WriteRelationshipRequest, items[i]).weight,
                "remapped_from": result.remapped_from,
                **plan.provenance.params(),
                **guarded.as_guard(props is None).params(),
            }
        )
        results[i] = result.model_copy(update={"conflicts": guarded.met})
    if not rows:
        return
    text = write_relationships_batch(type_, from_label, to_label, merge_endpoints)
    try:
        returned = await run_write(gate.backend, Statement(text, {"rows": rows}))
    except GateRejection as exc:  # atomic, as for nodes
        _refuse_all((row["i"] for row in rows), exc, outcomes)
        return
    for row in returned:
        i = row["i"]
        stubs = [side for side in ("from", "to") if row[f"{side}_stub"]]
        outcomes[i] = _relationship_written(
            i, results[i].model_copy(update={"weight": row["weight"], "stub_endpoints": stubs})
        )

"""`write_nodes` and `write_relationships`: many items in one call, each checked like its single-item tool,
the valid ones written in one UNWIND statement per label (or relationship type and endpoint shape), and
an outcome for every item in input order."""

from collections import defaultdict
from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidatorFunctionWrapHandler, WrapValidator

from write_gate.access.agents import Agent
from write_gate.core.cypher.aliases import aliased_keys
from write_gate.core.cypher.batch_writes import write_nodes_batch, write_relationships_batch
from write_gate.core.cypher.clauses import (
    identity_properties,
    property_breadcrumb,
    relationship_properties,
    stub_properties,
    written_properties,
)
from write_gate.core.cypher.statement import Statement
from write_gate.core.decisions import plan_node_write, plan_relationship_write
from write_gate.core.identity import identity_key
from write_gate.core.model import (
    ErrorCode,
    GateRejection,
    NodeWritten,
    RelationshipWritten,
    WriteNodeRequest,
    WriteRelationshipRequest,
    validation_problems,
)
from write_gate.services.gate import Gate, run_write


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


def _waves(rows: list[dict[str, Any]], identity: Any) -> list[list[dict[str, Any]]]:
    """Rows in statements that hold each identity once: a key written twice in one batch is written twice,
    in input order, as two single calls would (within one UNWIND the engine's order is not guaranteed)."""
    if len({identity(row) for row in rows}) == len(rows):
        return [rows]  # the usual case: no key repeats
    waves: list[list[dict[str, Any]]] = []
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
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
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
                compile_statement=False,
            )
            agent.grant.check_labels([plan.result.label])
        except (GateRejection, ValidationError) as exc:
            outcomes[i] = _rejected(i, exc)
            continue
        result = plan.result
        groups[result.label].append(
            {
                "i": i,
                "key": identity_key(result.merge_keys),
                "identity": identity_properties(result.label, result.merge_keys, plan.provenance),
                "properties": written_properties(
                    result.label, plan.properties, result.remapped_from, plan.provenance, result.property_remaps
                ),
                "remapped_from": result.remapped_from,
                **plan.provenance.params(),
            }
        )
        outcomes[i] = _node_written(i, result)
    for label, rows in groups.items():
        text = write_nodes_batch(label)
        for wave in _waves(rows, lambda row: row["key"]):
            try:
                landed = {row["i"] for row in await run_write(gate.backend, Statement(text, {"rows": wave}))}
            except GateRejection as exc:
                for row in wave:  # the statement is atomic: none of its rows was written
                    outcomes[row["i"]] = _rejected(row["i"], exc)
                continue
            for row in wave:  # a key that is an alias wrote nothing: write it as write_node does, to the survivor
                if row["i"] not in landed:
                    outcomes[row["i"]] = await _one_node(gate, row["i"], cast(WriteNodeRequest, items[row["i"]]), agent)
    return _summary(gate, outcomes)


async def _one_node(gate: Gate, i: int, request: WriteNodeRequest, agent: Agent) -> ItemOutcome:
    try:
        result = await gate.write_node(request, agent)
    except GateRejection as exc:
        return _rejected(i, exc)
    return _node_written(i, result)


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
    )


def _relationship_written(i: int, result: RelationshipWritten, *, stored: bool = True) -> ItemOutcome:
    """`stored=False`: planned only, its weight and stub endpoints are known once the batch statement ran."""
    return ItemOutcome(
        index=i,
        status="written",
        label=result.type,
        confidence=result.confidence,
        remapped_from=result.remapped_from,
        property_remaps=result.property_remaps or None,
        weight=result.weight if stored else None,
        stub_endpoints=list(result.stub_endpoints) if stored else None,
    )


async def write_relationships(
    gate: Gate, items: list[WriteRelationshipRequest | ValidationError], agent: Agent
) -> BatchWritten:
    stamp = gate.stamp(agent)
    outcomes: list[ItemOutcome | None] = [None] * len(items)
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
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
        shape = (plan.result.type, plan.start.label, plan.end.label, plan.merge_endpoints)
        row: dict[str, Any] = {"i": i, "from_key": plan.start.key, "to_key": plan.end.key}
        if plan.merge_endpoints:
            row["from_stub"] = stub_properties(plan.start.label, plan.start.keys, plan.provenance)
            row["to_stub"] = stub_properties(plan.end.label, plan.end.keys, plan.provenance)
        groups[shape].append(
            {
                **row,
                "properties": {
                    **relationship_properties(plan.properties, plan.provenance),
                    **property_breadcrumb(plan.property_remaps),
                },
                "weight": request.weight,
                "remapped_from": plan.result.remapped_from,
                **plan.provenance.params(),
            }
        )
        outcomes[i] = _relationship_written(i, plan.result, stored=False)
    for (type_, from_label, to_label, merge_endpoints), rows in groups.items():
        text = write_relationships_batch(type_, from_label, to_label, merge_endpoints)
        for wave in _waves(rows, lambda row: (row["from_key"], row["to_key"])):
            await _write_relationship_wave(gate, text, wave, outcomes, from_label, to_label)
            await _through_aliases(gate, wave, outcomes, items, agent, from_label, to_label)
    return _summary(gate, outcomes)


async def _through_aliases(
    gate: Gate,
    rows: list[dict[str, Any]],
    outcomes: list[ItemOutcome | None],
    items: list[WriteRelationshipRequest | ValidationError],
    agent: Agent,
    from_label: str,
    to_label: str,
) -> None:
    """Rows that found no endpoint may name an alias: those are written as write_relationship does, to the
    survivor (one read per endpoint label tells which, so a batch of missing endpoints costs two reads)."""
    missing = [
        row for row in rows if (o := outcomes[row["i"]]) is not None and o.error_code is ErrorCode.ENDPOINT_NOT_FOUND
    ]
    if not missing:
        return
    aliased: set[str] = set()
    for label, side in ((from_label, "from_key"), (to_label, "to_key")):
        statement = aliased_keys(label)
        found = await gate.reader.read(Statement(statement.text, {"keys": [row[side] for row in missing]}))
        aliased |= {(side, r["key"]) for r in found}
    for row in missing:
        if (("from_key", row["from_key"]) in aliased) or (("to_key", row["to_key"]) in aliased):
            i = row["i"]
            try:
                result = await gate.write_relationship(cast(WriteRelationshipRequest, items[i]), agent)
            except GateRejection as exc:
                outcomes[i] = _rejected(i, exc)
                continue
            outcomes[i] = _relationship_written(i, result)


async def _write_relationship_wave(
    gate: Gate,
    text: str,
    rows: list[dict[str, Any]],
    outcomes: list[ItemOutcome | None],
    from_label: str,
    to_label: str,
) -> None:
    try:
        returned = await run_write(gate.backend, Statement(text, {"rows": rows}))
    except GateRejection as exc:
        for row in rows:
            outcomes[row["i"]] = _rejected(row["i"], exc)
        return
    found = {row["i"]: row for row in returned}
    for row in rows:
        i = row["i"]
        if i not in found:
            outcomes[i] = ItemOutcome(
                index=i,
                status="rejected",
                error_code=ErrorCode.ENDPOINT_NOT_FOUND,
                message="an endpoint was not found: write it first, or pass endpoint_policy='merge_endpoints'",
                details={"from_label": from_label, "to_label": to_label},
            )
            continue
        stubs = [side for side in ("from", "to") if found[i][f"{side}_stub"]]
        outcomes[i] = outcomes[i].model_copy(update={"weight": found[i]["weight"], "stub_endpoints": stubs})

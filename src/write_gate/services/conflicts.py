"""`resolve_conflict`: pick one claim of an open conflict (keep_both held the incoming one beside the current).

Picking `current` closes the conflict and changes no data. Picking `incoming` writes the held value with its
own claim (who wrote it, from where, how sure, when: the resolver only chooses, and is recorded as
`resolved_by`), guarded like any gate write by the subject's revision and by the conflict still being open,
and leaves a `resolve` change in the history.
"""

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from write_gate.access.agents import Agent
from write_gate.core.claims import ValueProvenance, parse_claim
from write_gate.core.clock import utc_now
from write_gate.core.cypher.aliases import ALIAS_OF
from write_gate.core.cypher.clauses import relationship_properties, written_properties
from write_gate.core.cypher.records import (
    CONFLICT_BY_ID,
    KEEP_CURRENT,
    current_relationship,
    take_incoming_on_node,
    take_incoming_on_relationship,
)
from write_gate.core.cypher.statement import Provenance, Statement
from write_gate.core.guard import revision_of
from write_gate.core.history import Op, Subject, WriteContext, set_changes
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.services.gate import MAX_ATTEMPTS, Gate, backoff, new_id, read_to_write, run_write

Pick = Literal["current", "incoming"]


class ResolveConflictRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    conflict_id: Annotated[
        str, Field(min_length=1, max_length=64, description="From list_conflicts or a write's answer.")
    ]
    pick: Annotated[Pick, Field(description="current: keep the value in place. incoming: write the held one.")]


class ConflictResolved(BaseModel):
    status: Literal["resolved"] = "resolved"
    conflict_id: str
    property: str
    picked: Pick
    value: Any  # the value the subject holds now
    claim: ValueProvenance  # and its claim


def _not_open(conflict_id: str, status: Any) -> GateRejection:
    if status is None:
        return GateRejection(ErrorCode.INVALID_INPUT, "no conflict has this id", reason="unknown_conflict")
    return GateRejection(
        ErrorCode.INVALID_INPUT,
        f"this conflict is {status}, not open: only open conflicts (keep_both) are resolved",
        reason="not_open",
        conflict_status=status,
        conflict_id=conflict_id,
    )


async def resolve_conflict(gate: Gate, request: ResolveConflictRequest, agent: Agent) -> ConflictResolved:
    rows = await gate.reader.read(Statement(CONFLICT_BY_ID.text, {"conflict_id": request.conflict_id}))
    record: dict[str, Any] = rows[0]["conflict"] if rows else {}
    if record.get("status") != "open":
        raise _not_open(request.conflict_id, record.get("status"))
    subject = Subject(
        record["subject"],
        record["label"],
        record.get("key"),
        record.get("from_label"),
        record.get("from_key"),
        record.get("to_label"),
        record.get("to_key"),
    )
    if subject.kind == "node":
        agent.grant.check_labels([subject.label])
    else:
        agent.grant.check_types([subject.label])
    now = utc_now()
    closing = {
        "conflict_id": request.conflict_id,
        "picked": request.pick,
        "resolved_by": agent.id,
        "resolved_at": now,
    }
    prop = record["property"]
    chosen = "current" if request.pick == "current" else "incoming"
    claim = parse_claim(record.get(f"{chosen}_claim"))
    if claim is None:  # a damaged record: nothing to stamp the value with
        raise GateRejection(ErrorCode.INVALID_INPUT, "this conflict's record has no usable claim", reason="damaged")
    if request.pick == "current":
        [done] = await run_write(gate.backend, Statement(KEEP_CURRENT.text, closing))
        if not done["resolved"]:
            raise _not_open(request.conflict_id, "resolved")
        return ConflictResolved(
            conflict_id=request.conflict_id,
            property=prop,
            picked="current",
            value=record.get("current_value"),
            claim=claim,
        )
    value = record.get("incoming_value")
    await _take_incoming(gate, subject, prop, value, claim, closing, agent)
    return ConflictResolved(conflict_id=request.conflict_id, property=prop, picked="incoming", value=value, claim=claim)


async def _take_incoming(
    gate: Gate,
    subject: Subject,
    prop: str,
    value: Any,
    claim: ValueProvenance,
    closing: dict[str, Any],
    agent: Agent,
) -> None:
    """The held value written with its own claim, guarded by the subject's revision (read again if it moved)."""
    provenance = Provenance(
        claim.confidence, claim.source, claim.extraction_method, gate.version, claim.at, claim.agent
    )
    for attempt in range(MAX_ATTEMPTS):
        await backoff(attempt)
        if subject.kind == "node":
            assert subject.key is not None
            current = await gate.current_node(subject.label, subject.key)
            properties = written_properties({prop: value}, provenance)
            statement = take_incoming_on_node(subject.label, gate.backend.dialect)
            params: dict[str, Any] = {"key": subject.key}
        else:
            read = current_relationship(subject.label, subject.from_label or "", subject.to_label or "")
            [found] = await read_to_write(
                gate.backend, Statement(read.text, {"from_key": subject.from_key, "to_key": subject.to_key})
            )
            current = found["props"]
            properties = relationship_properties({prop: value}, provenance)
            statement = take_incoming_on_relationship(subject.label, subject.from_label or "", subject.to_label or "")
            params = {"from_key": subject.from_key, "to_key": subject.to_key}
        if current is None or current.get(ALIAS_OF) is not None:
            raise GateRejection(
                ErrorCode.INVALID_INPUT,
                "the conflict's node or relationship no longer exists (deleted or merged); nothing was written",
                reason="subject_gone",
            )
        revision = revision_of(current)
        ctx = WriteContext(new_id(), closing["resolved_at"], revision + 1, claim)
        changes = [
            {**change, "op": Op.RESOLVE.value, "agent": agent.id}
            for change in set_changes(subject, current, {prop: value}, ctx)
        ]
        params |= {"properties": properties, "revision": revision, "changes": changes, "conflicts": [], **closing}
        [done] = await run_write(gate.backend, Statement(statement.text, params))
        if done["resolved"]:
            return
        check = await gate.reader.read(Statement(CONFLICT_BY_ID.text, {"conflict_id": closing["conflict_id"]}))
        if check and check[0]["conflict"].get("status") != "open":
            raise _not_open(closing["conflict_id"], check[0]["conflict"].get("status"))
    raise GateRejection(
        ErrorCode.CONFLICT,
        "the subject kept changing under concurrent writers; nothing was written; try again",
        reason="contention",
    )

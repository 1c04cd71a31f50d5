"""The quarantine's storage and tools: keep a rejected call, list the kept ones, replay them, discard them.

What is kept and how is decided in core.quarantine; the statements are core.cypher.quarantine's. Keeping never
fails a call: an entry the engine does not take is logged and let go. A replay runs each entry through the
call path the surface hands it (`Rerun`: the same validation, registry, grants and provenance as a fresh call,
as the agent that sent it); an entry that now succeeds is removed, one still rejected stays with its new code.
Replays running at once try each entry once: a replay claims an entry only if no replay held it when this one
picked its entries and none has claimed it since (core.cypher.quarantine.CLAIM counts the claims), and a claim is
held until its replay ends, so a replay that picked its entries while another ran leaves that one's entries alone
even where the engine ran its read only after their tries. "At once" is by the calls' arrival: an entry whose
last try the engine stamped at or after this call arrived (core.quarantine.ReplayArrival) is not tried again,
however late the engine ran this replay's read, and is answered as that try left it.
"""

import logging
import time
from collections.abc import Awaitable, Callable, Mapping, MutableSequence, Sequence
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

import anyio
from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from write_gate.core.clock import as_utc_text, utc_now
from write_gate.core.cypher import quarantine as cypher
from write_gate.core.cypher.statement import Statement
from write_gate.core.identifiers import normalize_identifier
from write_gate.core.quarantine import (
    RejectedCall,
    ReplayArrival,
    arguments_text,
    concerned_names,
    entry_record,
    is_kept,
    parse_arguments,
    rejected_calls,
    replay_arrival,
    storable_text,
)
from write_gate.services.gate import Gate, new_id, run_write
from write_gate.services.reads import Cursor, decode_cursor, encode_cursor

logger = logging.getLogger(__name__)

MAX_LIST = 500
MAX_REPLAY = 500
# How long a replay's claim on an entry holds: a replay that stopped part way (its gate died, its call was
# cancelled) leaves the entry to the next replay after this, never to two at once before.
CLAIM_STALE = timedelta(minutes=10)

# Re-runs a call as a fresh one: (tool, arguments, agent id, provenance source) -> (is_error, structured answer).
Rerun = Callable[[str, dict[str, Any], str, str | None], Awaitable[tuple[bool, dict[str, Any]]]]

Filter = str | SkipJsonSchema[None]  # advertised as a string; null is no filter


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ListQuarantineRequest(_Request):
    error_code: Filter = None
    label: Filter = None
    agent: Filter = None
    tool: Filter = None
    limit: Annotated[int, Field(ge=1, le=MAX_LIST)] = 50
    cursor: Cursor = None


class ReplayQuarantineRequest(_Request):
    ids: list[str] | SkipJsonSchema[None] = None
    error_code: Filter = None
    label: Filter = None
    agent: Filter = None
    tool: Filter = None
    limit: Annotated[int, Field(ge=1, le=MAX_REPLAY)] = 100


class DiscardQuarantineRequest(_Request):
    ids: Annotated[list[str], Field(min_length=1, max_length=MAX_LIST)]


class QuarantineEntry(BaseModel):
    id: str
    tool: str
    agent: str
    error_code: str
    message: str
    labels: list[str] = Field(default_factory=list)
    at: str
    arguments: dict[str, Any]
    replays: int = 0


class QuarantineList(BaseModel):
    entries: list[QuarantineEntry]
    next_cursor: str | None = None


class ReplayOutcome(BaseModel):
    id: str
    tool: str
    agent: str
    status: Literal["written", "rejected"]
    error_code: str | None = None
    result: dict[str, Any]
    by_another_replay: bool = Field(
        default=False,
        description="Tried by another replay running at once with this one (its call arrived before that one "
        "ended), not again by this one: the outcome is what that try left.",
    )


class Replayed(BaseModel):
    # The entries this call tried; `outcomes` also lists, marked by_another_replay, those another replay at once did.
    replayed: int
    written: int
    rejected: int
    outcomes: list[ReplayOutcome]


class Discarded(BaseModel):
    discarded: list[str]


def _entry(record: Mapping[str, Any]) -> QuarantineEntry:
    return QuarantineEntry(
        id=record["id"],
        tool=record.get("tool", ""),
        agent=record.get("agent", ""),
        error_code=record.get("error_code", ""),
        message=record.get("message", ""),
        labels=list(record.get("labels") or []),
        at=record.get("at", ""),
        arguments=parse_arguments(record.get("arguments")),
        replays=record.get("replays") or 0,
    )


_last_seq = 0


def _next_seq() -> int:
    """The wall clock in nanoseconds, strictly increasing within this process (two rejections in one tick)."""
    global _last_seq
    _last_seq = max(time.time_ns(), _last_seq + 1)
    return _last_seq


class Quarantine:
    """The gate's quarantine: at most `max_entries` (0: none kept), arguments of at most `max_bytes`."""

    def __init__(self, gate: Gate, max_entries: int, max_bytes: int) -> None:
        self.gate, self.max_entries, self.max_bytes = gate, max_entries, max_bytes

    async def keep(self, calls: list[RejectedCall], agent: str, source: str | None) -> list[str]:
        """Keep rejected calls; the ids kept (none when off, for a transient code, or for arguments over
        max_bytes). Any failure is logged, never raised, so the agent's answer is the rejection alone."""
        try:
            return await self._keep(calls, agent, source)
        except Exception:  # noqa: BLE001 - keeping is best effort; the agent's answer must not change
            logger.warning("%d rejected call(s) not quarantined", len(calls), exc_info=True)
            return []

    async def _keep(self, calls: list[RejectedCall], agent: str, source: str | None) -> list[str]:
        records = []
        for rejected in calls if self.max_entries else ():
            if not is_kept(rejected.rejection.get("error_code")):
                continue
            text = arguments_text(rejected.arguments)
            if len(text.encode()) > self.max_bytes:
                continue
            details = rejected.rejection.get("details")
            details = details if isinstance(details, Mapping) else {}
            record = entry_record(
                entry_id=new_id(),
                seq=_next_seq(),
                at=utc_now(),
                tool=rejected.tool,
                arguments=text,
                agent=agent,
                source=source,
                error_code=str(rejected.rejection.get("error_code")),
                message=str(rejected.rejection.get("message") or ""),
                labels=concerned_names(rejected.arguments, details, rejected.tool_label),
            )
            records.append(record)
        if records:
            await run_write(self.gate.backend, Statement(cypher.KEEP.text, {"entries": records}))
            await self._bound()
        return [record["id"] for record in records]

    async def _bound(self) -> None:
        """First in, first out beyond max_entries."""
        [row] = await self.gate.reader.read(cypher.COUNT)
        excess = row["entries"] - self.max_entries
        if excess > 0:
            await run_write(self.gate.backend, Statement(cypher.DROP_OLDEST.text, {"excess": excess}))

    async def list(self, request: ListQuarantineRequest) -> QuarantineList:
        """Newest first, keyset-paged on (seq, id)."""
        position = decode_cursor(request.cursor, "quarantine", s=int, i=str) or {}
        params = _filters(request, None) | {
            "after_seq": position.get("s"),
            "after_id": position.get("i"),
            "limit": request.limit + 1,  # one more: is there a next page
        }
        rows = await self.gate.reader.read(Statement(cypher.LIST.text, params))
        page = rows[: request.limit]
        last = page[-1] if page else None
        more = len(rows) > request.limit
        cursor = encode_cursor("quarantine", s=last["seq"], i=last["id"]) if more and last else None
        return QuarantineList(entries=[_entry(row["entry"]) for row in page], next_cursor=cursor)

    async def replay(self, request: ReplayQuarantineRequest, rerun: Rerun, arrived: float | None = None) -> Replayed:
        """Oldest first, each as a fresh call; written ones leave the quarantine (a batch's items rejected now are
        kept as single calls), rejected ones stay with their new code (a transient one leaves the entry as it was).
        `arrived`: the call's arrival at the gate, `time.monotonic()` (now, if not given)."""
        arrived = time.monotonic() if arrived is None else arrived
        params = _filters(request, request.ids) | {"limit": request.limit}
        # This replay's first statement: where the engine places it among other replays' claims and ends.
        rows = await self.gate.reader.read(Statement(cypher.select(self.gate.backend.dialect).text, params))
        arrival = replay_arrival((row["now"] for row in rows), time.monotonic() - arrived)
        replay_id = new_id()
        claimed: list[str] = []  # the entries this replay claimed, to let go when it ends
        try:
            outcomes = list(await self._run(rows, arrival, replay_id, claimed, rerun))
        finally:  # even when cancelled: the next replay must not wait out the stale hold
            with anyio.CancelScope(shield=True):
                await self._end(claimed, replay_id)
        tried = [outcome for outcome in outcomes if not outcome.by_another_replay]
        written = sum(outcome.status == "written" for outcome in tried)
        return Replayed(replayed=len(tried), written=written, rejected=len(tried) - written, outcomes=outcomes)

    async def _run(
        self,
        rows: Sequence[Mapping[str, Any]],
        arrival: ReplayArrival | None,
        replay_id: str,
        claimed: MutableSequence[str],
        rerun: Rerun,
    ) -> Sequence[ReplayOutcome]:
        outcomes = []
        for row in rows:
            entry = row["entry"]
            if _held(entry):
                continue  # another replay runs it now (or ran it and has not ended), and reports it
            if arrival is not None and arrival.tried_at_once(entry.get("tried_at")):
                outcomes.append(_left_by_another(entry))  # a replay at once tried it, and has ended since
                continue
            if not await self._claim(entry, replay_id):
                continue  # another replay claimed it since this one read it, and reports it
            claimed.append(entry["id"])
            arguments = parse_arguments(entry.get("arguments"))
            tool, agent = entry.get("tool", ""), entry.get("agent", "")
            is_error, answer = await rerun(tool, arguments, agent, entry.get("source"))
            code = answer.get("error_code") if is_error else None
            if not is_error:  # a kept batch that now passes as a whole: its items still rejected are kept alone
                await self.keep(rejected_calls(tool, arguments, answer, False, None), agent, entry.get("source"))
            await self._settle(entry["id"], code, answer)
            status: Literal["written", "rejected"] = "rejected" if is_error else "written"
            outcomes.append(
                ReplayOutcome(
                    id=entry["id"],
                    tool=tool,
                    agent=agent,
                    status=status,
                    error_code=code,
                    result=answer,
                )
            )
        return outcomes

    async def _claim(self, entry: Mapping[str, Any], replay_id: str) -> bool:
        """Whether this replay may try the entry, not held when this replay picked it (`_held`): none has claimed
        it since (`claims`, the count seen then). So replays running at once never try an entry twice."""
        now = datetime.now(UTC)
        stale_before = as_utc_text(now - CLAIM_STALE)
        claims = entry.get("claims") or 0
        params = {"id": entry["id"], "claims": claims, "replay": replay_id}
        params |= {"now": as_utc_text(now), "stale_before": stale_before}
        return bool(await run_write(self.gate.backend, Statement(cypher.CLAIM.text, params)))

    async def _settle(self, entry_id: str, code: str | None, answer: Mapping[str, Any]) -> None:
        if code is None:
            await run_write(self.gate.backend, Statement(cypher.REMOVE.text, {"ids": [entry_id]}))
        elif is_kept(code):
            message = storable_text(str(answer.get("message", "")))
            params = {"id": entry_id, "error_code": storable_text(code), "message": message, "at": utc_now()}
            await run_write(self.gate.backend, Statement(cypher.still_rejected(self.gate.backend.dialect).text, params))
        # transient: the entry stays as it was, for a replay that starts after this one ends

    async def _end(self, claimed: Sequence[str], replay_id: str) -> None:
        """Let go of this replay's claims. Best effort: a claim not let go is taken over once stale."""
        if not claimed:
            return
        try:
            params = {"ids": claimed, "replay": replay_id}
            await run_write(self.gate.backend, Statement(cypher.end(self.gate.backend.dialect).text, params))
        except Exception:  # noqa: BLE001 - the replay's answer stands; its claims go stale
            logger.warning("the claims of a replay on %d entries were not let go", len(claimed), exc_info=True)

    async def discard(self, request: DiscardQuarantineRequest) -> Discarded:
        rows = await run_write(self.gate.backend, Statement(cypher.REMOVE.text, {"ids": request.ids}))
        return Discarded(discarded=sorted(row["id"] for row in rows))


def _held(entry: Mapping[str, Any]) -> bool:
    """Whether a replay held the entry when this one picked it (that replay had not ended yet), and not so long
    that its gate must have stopped part way."""
    held = entry.get("replaying")
    return isinstance(held, str) and held >= as_utc_text(datetime.now(UTC) - CLAIM_STALE)


def _left_by_another(entry: Mapping[str, Any]) -> ReplayOutcome:
    """An entry another replay at once tried and left still refused (a written one has left the quarantine):
    answered as that try left it, its code and message."""
    code = entry.get("error_code", "")
    return ReplayOutcome(
        id=entry["id"],
        tool=entry.get("tool", ""),
        agent=entry.get("agent", ""),
        status="rejected",
        error_code=code,
        result={"error_code": code, "message": entry.get("message", "")},
        by_another_replay=True,
    )


def _filters(request: ListQuarantineRequest | ReplayQuarantineRequest, ids: list[str] | None) -> dict[str, Any]:
    label = normalize_identifier(request.label, "label") if request.label is not None else None
    return {"error_code": request.error_code, "label": label, "agent": request.agent, "tool": request.tool, "ids": ids}

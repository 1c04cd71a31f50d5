"""Safe retries on the graph: claim a key, settle it with the call's outcome, or release it (core.idempotency
decides; core/cypher/idempotency.py holds the statements). The records are shared by every gate on the graph."""

import json
import logging
import random
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import anyio

from write_gate.core.clock import as_utc_text
from write_gate.core.cypher import idempotency as cypher
from write_gate.core.cypher.statement import Statement
from write_gate.core.idempotency import Verdict, Window, arguments_digest, claimed_at, judge, record_id, retry_after
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.engines import BackendError, BackendUnavailable, GraphBackend, traced_writes
from write_gate.engines.errors import engine_failure
from write_gate.services.gate import new_id, run_write
from write_gate.services.late_writes import LateWrites

logger = logging.getLogger(__name__)

POLL_SECONDS = (0.02, 0.05, 0.1, 0.2, 0.5)  # a repeat's waits for a running call, growing to the last


@dataclass(frozen=True)
class Claim:
    """This call holds the key: it runs, then settles or releases the claim."""

    id: str
    claim: str


@dataclass(frozen=True)
class Stored:
    """The key's first outcome, to answer again."""

    outcome: Any
    text: str
    is_error: bool
    claimed_at: str


class IdempotencyRecords:
    def __init__(self, backend: GraphBackend, window: Window, wait_seconds: float, late: LateWrites) -> None:
        self.backend = backend
        self.window = window
        self.wait_seconds = wait_seconds
        self.late = late

    async def claim(self, key_scope: list[str], key: str, tool: str, arguments: dict[str, Any]) -> Claim | Stored:
        """Claim the key for this call, or meet the call that holds it: its outcome once it has one (waiting at
        most wait_seconds for it). GateRejection when the key was used for other arguments, its call is still
        running after the wait, or its gate stopped before storing an outcome."""
        rid, digest = record_id(key_scope, key), arguments_digest(tool, arguments)
        mine = new_id()
        params = {"id": rid, "args": digest, "tool": tool, "agent": key_scope[0], "claim": mine}
        deadline = time.monotonic() + self.wait_seconds
        records: list[dict[str, Any]] = []
        attempt = 0
        while True:  # bounded by the deadline
            now = datetime.now(UTC)
            if not records:  # free (or freed): try to claim it
                claim = Statement(cypher.CLAIM.text, params | {"at": as_utc_text(now)})
                with traced_writes() as sent:
                    try:
                        rows = await run_write(self.backend, claim)
                    except GateRejection:
                        if sent.reached:  # it may have landed: a claim nobody holds would keep retries waiting
                            await self._surely("withdrawn", Statement(cypher.RELEASE.text, {"id": rid, "claim": mine}))
                        raise
                if any(row["won"] for row in rows) and await self._alone(rid, mine):
                    return Claim(rid, mine)
                records = [row["record"] for row in rows if not row["won"]]
            if len(records) == 1:
                record = records[0]
                if now - claimed_at(record) >= self.window.retention:  # expired: the key runs again
                    cutoff = as_utc_text(now - self.window.retention)
                    await run_write(self.backend, Statement(cypher.FORGET_EXPIRED.text, {"id": rid, "cutoff": cutoff}))
                    records = []
                    continue
                verdict = judge(record, digest, now, self.window)
                if verdict is not Verdict.WAIT:
                    return self._answer(verdict, record)
            if time.monotonic() >= deadline:
                wait = retry_after(records[0], now, self.window) if len(records) == 1 else 1.0
                raise GateRejection(
                    ErrorCode.IDEMPOTENCY_IN_PROGRESS,
                    f"a call with this idempotency_key is still running; retry in {wait:g} seconds",
                    field="idempotency_key",
                    retry_after_seconds=wait,
                )
            # Running, or several claimants of one key are sorting themselves out (see _alone).
            await anyio.sleep(POLL_SECONDS[min(attempt, len(POLL_SECONDS) - 1)] * random.uniform(0.5, 1.5))  # noqa: S311
            attempt += 1
            records = await self._read(rid)

    async def _alone(self, rid: str, mine: str) -> bool:
        """Whether this call's claim is the key's only record. An engine that does not serialise a MERGE's match
        with its create (FalkorDB under concurrent writers) can let two calls create a record each: a claim
        counts only when, once written, it is alone, and one that is not withdraws. Two winners would need each
        to be alone after both were written; both may withdraw, and then both claim again. A check the engine
        fails withdraws the claim too: the call will not run, and its retry must not wait on a claim nobody holds."""
        release = Statement(cypher.RELEASE.text, {"id": rid, "claim": mine})
        try:
            records = await self._read(rid)
        except GateRejection:
            await self._surely("withdrawn", release)
            raise
        if [record["claim"] for record in records] == [mine]:
            return True
        await self._surely("withdrawn", release)
        return False

    def _answer(self, verdict: Verdict, record: dict[str, Any]) -> Stored:
        if verdict is Verdict.REPLAY:
            outcome = json.loads(record["outcome"])
            return Stored(outcome, record.get("text", ""), bool(record["is_error"]), record["at"])
        if verdict is Verdict.REUSED:
            raise GateRejection(
                ErrorCode.IDEMPOTENCY_KEY_REUSED,
                "this idempotency_key was used for another call (other arguments or tool); use a new key",
                field="idempotency_key",
            )
        raise GateRejection(
            ErrorCode.IDEMPOTENCY_OUTCOME_UNKNOWN,
            "this key's call ended before its outcome was known (its gate stopped, or the engine went away after "
            "its write reached it): it may or may not have written; read the graph, then retry with a new key if "
            "it did not",
            field="idempotency_key",
            claimed_at=record["at"],
        )

    async def _read(self, rid: str) -> list[dict[str, Any]]:
        try:
            rows = await self.backend.read(Statement(cypher.READ.text, {"id": rid}))
        except (BackendUnavailable, BackendError) as exc:
            raise engine_failure(exc, "read") from exc
        return [row["record"] for row in rows]

    async def settle(self, claim: Claim, outcome: Any, text: str, is_error: bool) -> None:
        """Store the outcome for repeats (meanwhile they are told IDEMPOTENCY_IN_PROGRESS)."""
        params = {"id": claim.id, "claim": claim.claim, "is_error": is_error, "text": text}
        params["outcome"] = json.dumps(outcome, ensure_ascii=False)
        await self._surely("settled", Statement(cypher.SETTLE.text, params))

    async def in_doubt(self, claim: Claim) -> None:
        """The call ended without an outcome after a write of it may have been applied: its repeats answer
        IDEMPOTENCY_OUTCOME_UNKNOWN."""
        mark = Statement(cypher.MARK_IN_DOUBT.text, {"id": claim.id, "claim": claim.claim})
        await self._surely("marked in doubt", mark)

    async def release(self, claim: Claim) -> None:
        """Free the key: the outcome was transient and nothing was written, so a retry should run."""
        await self._surely("released", Statement(cypher.RELEASE.text, {"id": claim.id, "claim": claim.claim}))

    async def _surely(self, what: str, statement: Statement) -> None:
        """Write now; if the engine is away, keep trying in the background (services/late_writes.py) while the
        call's answer goes out. Until it lands, repeats wait as for a running call."""
        try:
            await self.backend.write(statement)
        except (BackendUnavailable, BackendError) as exc:
            logger.warning("an idempotency record was not %s yet (%s); trying again in the background", what, exc)
            self.late.keep_trying(self.backend, statement, what, self.window.stale.total_seconds())
        except Exception as exc:  # anything else: the call's own answer still goes out, as it always did
            logger.warning("an idempotency record was not %s: %s", what, exc)

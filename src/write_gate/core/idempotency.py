"""Safe retries (issue 15, item 1), decided purely: whose key it is, what a stored record means for a repeat,
and which outcomes are worth keeping.

A write or admin call may carry `idempotency_key`. The first call with a key claims it (a record on the graph,
shared by every gate on it), runs, and stores its outcome on the record; a repeat with the same arguments answers
that outcome again and changes nothing. Records expire after the retention window, and an expired key runs again.
"""

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from write_gate.core.model import ErrorCode

KEY_ARGUMENT = "idempotency_key"
MAX_KEY_LENGTH = 200
PENDING = "pending"
RETRY_AFTER_CAP_SECONDS = 5.0
DONE = "done"
IN_DOUBT = "unknown"  # its call ended without an outcome after a write of it may have been applied

# Outcomes a retry should not see again: the engine away, a rate limit, a defect, or a wait that ran out. Their
# claim is released, so the next call with the key runs.
TRANSIENT_CODES = frozenset(
    {ErrorCode.BACKEND_UNAVAILABLE, ErrorCode.RATE_LIMITED, ErrorCode.INTERNAL_ERROR, ErrorCode.IDEMPOTENCY_IN_PROGRESS}
)


def scope(agent_id: str) -> list[str]:
    """Whose keys these are: the agent's. One place, so a space (or a tenant) can join the scope later."""
    return [agent_id]


def record_id(key_scope: list[str], key: str) -> str:
    """The record's id: a digest of scope and key, so neither's text decides the id's length or form."""
    return hashlib.sha256(json.dumps([*key_scope, key], ensure_ascii=False).encode()).hexdigest()


def arguments_digest(tool: str, arguments: Mapping[str, Any]) -> str:
    """The call as a repeat must match it: the tool and its canonical arguments, the key left out."""
    call = {"tool": tool, "arguments": {k: v for k, v in arguments.items() if k != KEY_ARGUMENT}}
    text = json.dumps(call, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def kept(is_error: bool, error_code: object) -> bool:
    """Whether an outcome is stored for repeats: every success, and every rejection but the transient ones."""
    return not is_error or error_code not in TRANSIENT_CODES


class Disposal(StrEnum):
    SETTLE = "settle"  # store the outcome: repeats answer it
    RELEASE = "release"  # nothing was written and the outcome is transient: the next call with the key runs
    DOUBT = "doubt"  # transient, but a write of it may have been applied: running it again could apply it twice


def dispose(is_error: bool, error_code: object, wrote: bool) -> Disposal:
    """What becomes of a claimed key once its call has answered; `wrote`: a write of the call reached the engine
    (applied, or perhaps applied before the engine went away)."""
    if kept(is_error, error_code):
        return Disposal.SETTLE
    return Disposal.DOUBT if wrote else Disposal.RELEASE


class Verdict(StrEnum):
    REPLAY = "replay"  # the key's call finished: answer its outcome
    REUSED = "reused"  # the key was used for other arguments
    WAIT = "wait"  # the key's call is still running (or its gate died less than the stale timeout ago)
    UNKNOWN = "unknown"  # its call never stored an outcome (its gate stopped, or the engine went away after a write
    # of it reached the engine): the write may or may not have landed


@dataclass(frozen=True)
class Window:
    retention: timedelta  # records older than this are forgotten
    stale: timedelta  # a pending claim older than this was left by a gate that stopped


def claimed_at(record: Mapping[str, Any]) -> datetime:
    return datetime.fromisoformat(record["at"])


def judge(record: Mapping[str, Any], digest: str, now: datetime, window: Window) -> Verdict:
    """What a repeat meets in a record it did not claim (an unexpired one)."""
    if record.get("args") != digest:
        return Verdict.REUSED
    if record.get("state") == DONE:
        return Verdict.REPLAY
    if record.get("state") == IN_DOUBT:
        return Verdict.UNKNOWN
    return Verdict.WAIT if now - claimed_at(record) < window.stale else Verdict.UNKNOWN


def retry_after(record: Mapping[str, Any], now: datetime, window: Window) -> float:
    """When to ask again about a pending claim: soon (it is most likely finishing), and never before a second,
    so a client never spins; no later than the claim is known stale."""
    left = (claimed_at(record) + window.stale - now).total_seconds()
    return max(1.0, min(RETRY_AFTER_CAP_SECONDS, round(left, 1)))

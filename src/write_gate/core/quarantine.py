"""The quarantine, decided purely: which rejections are kept, what they concerned, and how an entry is stored.

A write or admin call the gate rejects for a lasting reason (the registry lacks its label, a required property
is missing, the grant does not cover it...) is kept as one `:WriteGateQuarantine` record, so that once the
reason is gone (a schema load registers the label) it can be replayed as the agent sent it. A transient
rejection (the engine away, the registry not loaded yet, a defect, a rate limit) is not kept: a retry is its
remedy, not a replay.
"""

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from write_gate.core.values import unstorable

QUARANTINE_LABEL = "WriteGateQuarantine"

# Rejections a retry cures, and the safe retries' own answers about a key (not about the write: a replay of
# the call without its key would only repeat what the key's first outcome said).
TRANSIENT_CODES = frozenset(
    {
        "BACKEND_UNAVAILABLE",
        "INTERNAL_ERROR",
        "SCHEMA_SOURCE_UNAVAILABLE",
        "RATE_LIMITED",
        "IDEMPOTENCY_IN_PROGRESS",
        "IDEMPOTENCY_KEY_REUSED",
        "IDEMPOTENCY_OUTCOME_UNKNOWN",
    }
)

# The argument keys that name a node label or relationship type, in the gate's and the memory profile's tools.
_NAMING_KEYS = ("label", "type", "from_label", "to_label", "entityType", "relationType")
# The argument keys that hold a batch's items, whose own names count too.
_ITEM_KEYS = ("items", "entities", "relations")
MAX_NAMES = 20
MAX_NAME_LENGTH = 128
# A batch answers per item: a rejected item is kept as the single call it stands for (each item is what the
# single tool takes), so a replay writes that item alone.
BATCH_SINGLES = {"write_nodes": "write_node", "write_relationships": "write_relationship"}


@dataclass(frozen=True)
class RejectedCall:
    """A call (or a batch's item, as its single call) and its rejection (error_code, message, details)."""

    tool: str
    arguments: Mapping[str, Any]
    rejection: Mapping[str, Any]
    tool_label: str | None = None  # a typed tool's label


def rejected_calls(
    tool: str, arguments: Mapping[str, Any], answer: Mapping[str, Any], is_error: bool, tool_label: str | None
) -> list[RejectedCall]:
    """What a call's answer says was rejected for a lasting reason: the call itself, or a batch's items."""
    if is_error:
        return [RejectedCall(tool, arguments, answer, tool_label)] if is_kept(answer.get("error_code")) else []
    single, items = BATCH_SINGLES.get(tool), arguments.get("items")
    if single is None or not isinstance(items, list):
        return []
    found = []
    for outcome in answer.get("items") or []:
        if not isinstance(outcome, Mapping) or outcome.get("status") != "rejected":
            continue
        index = outcome.get("index")
        if not isinstance(index, int) or not 0 <= index < len(items):
            continue
        item = items[index]
        if isinstance(item, Mapping) and is_kept(outcome.get("error_code")):
            found.append(RejectedCall(single, item, outcome))
    return found


def is_kept(error_code: str | None) -> bool:
    """A rejection worth keeping for replay: any coded one but the transient kinds."""
    return bool(error_code) and error_code not in TRANSIENT_CODES


def _names_in(mapping: Mapping[str, Any]) -> Iterable[str]:
    for key in _NAMING_KEYS:
        value = mapping.get(key)
        if isinstance(value, str):
            yield value


def concerned_names(
    arguments: Mapping[str, Any], details: Mapping[str, Any], tool_label: str | None = None
) -> list[str]:
    """The labels and relationship types a rejected call concerned: a typed tool's label, the rejection's
    `label`/`type`, and those its arguments (and their batch items) name; leading colons dropped, sorted."""
    found: list[str] = [tool_label] if tool_label else []
    found += _names_in(details)
    found += _names_in(arguments)
    for key in _ITEM_KEYS:
        items = arguments.get(key)
        if isinstance(items, list):
            found += (name for item in items if isinstance(item, Mapping) for name in _names_in(item))
    stripped = (name.lstrip(":") for name in found)
    names = {name for name in stripped if 0 < len(name) <= MAX_NAME_LENGTH and not unstorable(name)}
    return sorted(names)[:MAX_NAMES]


def storable_text(text: str) -> str:
    """The text with what no engine stores replaced: a NUL (FalkorDB cuts a query at one) by U+FFFD, a lone
    surrogate by `?`."""
    return text.replace("\x00", "\ufffd").encode("utf-8", "replace").decode("utf-8")


def arguments_text(arguments: Mapping[str, Any]) -> str:
    """The call's arguments as JSON text: stored as one parameter value, replayed exactly as sent. ASCII, every
    other character escaped: a rejected call may hold text no engine stores (a NUL, a lone surrogate), and its
    entry must still be kept and read back as sent."""
    return json.dumps(arguments, ensure_ascii=True, sort_keys=True, separators=(",", ":"))


def entry_record(
    *,
    entry_id: str,
    seq: int,
    at: str,
    tool: str,
    arguments: str,
    agent: str,
    source: str | None,
    error_code: str,
    message: str,
    labels: list[str],
) -> dict[str, Any]:
    """The record's properties; an absent value is left out (no engine stores null, FalkorDB no empty list).
    Text that came with the call (a message may quote a name) is made storable."""
    record = {
        "id": entry_id,
        "seq": seq,
        "at": at,
        "tool": storable_text(tool),
        "arguments": arguments,
        "agent": storable_text(agent),
        "source": storable_text(source) if source is not None else None,
        "error_code": storable_text(error_code),
        "message": storable_text(message),
        "labels": labels,
    }
    return {key: value for key, value in record.items() if value not in (None, [])}


def parse_arguments(text: str | None) -> dict[str, Any]:
    """A stored entry's arguments; an entry whose text is not a JSON object replays with none."""
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class ReplayArrival:
    """When a replay call arrived at its gate, in the engine's time (milliseconds), and when the engine ran its
    read. The engine's clock is the one clock: the gate's monotonic clock only measures the delay from arrival."""

    arrived: int
    read: int

    def tried_at_once(self, tried_at: object) -> bool:
        """Whether an entry's last try (`tried_at`, stamped by the engine when the trying replay settled or ended
        it) came at or after this call's arrival: a replay running at once tried it, so this one does not. A
        stamp after this read's own time is from another clock (a restored graph), never "at once"."""
        return _is_clock(tried_at) and self.arrived <= tried_at <= self.read


def _is_clock(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def replay_arrival(read_clocks: Iterable[object], elapsed_seconds: float) -> ReplayArrival | None:
    """The call's arrival in engine time: the engine's clock when it ran the replay's read, less the time from
    the call's arrival to that read's answer on the gate's monotonic clock. That elapsed time over-estimates the
    time to the read (it holds the answer's way back), so the arrival comes out early: more entries count as
    tried at once, which errs toward NOT trying an entry again. Floored to the engine's millisecond, so a try in
    the arrival's own millisecond counts too. None where the read found nothing (no clock)."""
    clocks = [clock for clock in read_clocks if _is_clock(clock)]
    if not clocks:
        return None
    read = math.floor(min(clocks))  # the earliest, should the engine evaluate its clock per row
    return ReplayArrival(arrived=math.floor(read - max(elapsed_seconds, 0.0) * 1000), read=read)

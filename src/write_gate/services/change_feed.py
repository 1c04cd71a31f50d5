"""The change feed's reads: `changes_since` (poll from a cursor, oldest first) and the newest changes a change
resource answers. See `core.change_feed` for the order and the horizon that keeps a poller from skipping a
change that commits late."""

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from write_gate.core.change_feed import group_changes, horizon
from write_gate.core.claims import ValueProvenance, parse_claim
from write_gate.core.clock import utc_now
from write_gate.core.cypher.change_feed import (
    CHANGES_AFTER,
    KEYED_CHANGES_AFTER,
    KEYED_PROBE,
    LATEST_CHANGES,
    WINDOW_PROBE,
)
from write_gate.core.cypher.statement import Statement
from write_gate.core.feed_windows import KEY_TOP, Window, after_cursor, is_seq, newest_first, seq_key, seq_number
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.services.gate import Gate
from write_gate.services.history import filter_label, subject_of_record
from write_gate.services.reads import Cursor, decode_cursor, encode_cursor
from write_gate.services.windowed import Probe, Read, window_rows

MAX_LIMIT = 500
LATEST = 20  # the changes a change resource's read answers
_KIND = "changes"
_START: dict[str, Any] = {"s": "", "o": 0, "c": ""}  # before every record: a first call reads from the oldest kept one


def feed_position(cursor: str | None) -> dict[str, Any]:
    """A changes_since cursor's position: `s` (seq), `o` (its key in its millisecond, core/feed_windows.py) and
    `c` (change id). A cursor from before the keys has no `o`: it stood on a record written before them, whose
    key is its `seq`'s alone (the first item of its statement). A cursor from before `seq` existed holds the
    `at` in `a`, which is the seq of every record of its time (core/history.py)."""
    if cursor is None:
        return _START
    try:
        position: dict[str, Any] = decode_cursor(cursor, _KIND, s=str, c=str) or _START
    except GateRejection:
        old = decode_cursor(cursor, _KIND, a=str, c=str) or {}
        position = {"s": old["a"], "c": old["c"]}
    key = position.get("o", seq_key(position["s"]))
    # A position no record can have (a forged cursor) answered an empty page with itself as the next cursor, for
    # ever: refused, as a cursor of another shape is.
    seq_ok = position["s"] == "" or is_seq(position["s"])
    if not isinstance(key, int) or isinstance(key, bool) or not 0 <= key < KEY_TOP or not seq_ok:
        raise GateRejection(ErrorCode.INVALID_INPUT, "cursor is not a changes cursor from this server", field="cursor")
    return {"s": position["s"], "o": key, "c": position["c"]}


class ChangesSinceRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cursor: Cursor = None
    limit: Annotated[int, Field(ge=1, le=MAX_LIMIT)] = 50
    labels: list[str] | SkipJsonSchema[None] = None  # node labels or relationship types; none: every change


class PropertyChange(BaseModel):
    property: str
    before: Any = None
    after: Any = None
    before_claim: ValueProvenance | None = None
    claim: ValueProvenance | None = None


class FeedChange(BaseModel):
    change_id: str
    op: str
    at: str
    agent: str | None = None
    subject: dict[str, Any] = Field(description="label and merge_keys, or type and both endpoints.")
    properties: list[PropertyChange]


class ChangesFeed(BaseModel):
    changes: list[FeedChange]
    next_cursor: str = Field(description="Poll again with it.")
    more: bool = False


def _change(group: dict[str, Any]) -> FeedChange:
    return FeedChange(
        change_id=group["change_id"],
        op=group["op"],
        at=group["at"],
        agent=group["agent"],
        subject=subject_of_record(group["subject"]),
        properties=[
            PropertyChange(
                property=r["property"],
                before=r.get("before"),
                after=r.get("after"),
                before_claim=parse_claim(r.get("before_claim")),
                claim=parse_claim(r.get("claim")),
            )
            for r in group["records"]
        ],
    )


def _labels(gate: Gate, labels: list[str] | None) -> list[str] | None:
    return None if labels is None else sorted({filter_label(gate, label) for label in labels})


def _bounds(window: Window) -> dict[str, Any]:
    bounds = {"low": window.low, "high": window.high}
    if window.key_low is None or window.key_high is None:
        return bounds
    # The keys as the index holds them (+ 1: core/feed_windows.SEQ_KEY_INDEXED).
    return {**bounds, "key1_low": window.key_low + 1, "key1_high": window.key_high + 1}


def _probe(labels: list[str] | None) -> Probe:
    def probe(stretch: Window, cap: int) -> Statement:
        text = (KEYED_PROBE if stretch.keyed else WINDOW_PROBE).text
        return Statement(text, {**_bounds(stretch), "labels": labels, "cap": cap})

    return probe


async def feed_page(
    read: Read,
    after_seq: str,
    after_id: str,
    horizon_text: str,
    labels: list[str] | None,
    limit: int,
    after_key: int | None = None,
) -> list[dict[str, Any]]:
    """The first `limit` changes after the cursor (`after_seq`, `after_key`, `after_id`; the key, where not
    given, `after_seq`'s alone) up to the horizon, each with its records (CHANGES_AFTER's rows), from a window
    that holds them: inside a batch, a window of its millisecond's keys."""
    key = seq_key(after_seq) if after_key is None else after_key

    def page(window: Window) -> Statement:
        params = {"after_seq": after_seq, "after_key": key, "after_id": after_id, "horizon": horizon_text}
        text = (KEYED_CHANGES_AFTER if window.keyed else CHANGES_AFTER).text
        return Statement(text, {**params, "labels": labels, **_bounds(window), "limit": limit})

    search, keyed = after_cursor(after_seq, horizon_text), (seq_number(after_seq), key)
    return await window_rows(read, search, _probe(labels), page, limit, keyed)


async def newest(read: Read, labels: list[str] | None, limit: int, now: str) -> list[dict[str, Any]]:
    """The newest `limit` changes with their records (LATEST_CHANGES's rows), from a window that holds them."""

    def page(window: Window) -> Statement:
        return Statement(
            LATEST_CHANGES.text, {"labels": labels, "limit": limit, "low": window.low, "high": window.high}
        )

    return await window_rows(read, newest_first(now), _probe(labels), page, limit)


async def changes_since(gate: Gate, request: ChangesSinceRequest, settle_seconds: float) -> ChangesFeed:
    position = feed_position(request.cursor)
    labels = _labels(gate, request.labels)
    horizon_text = horizon(utc_now(), settle_seconds, gate.in_flight.oldest())
    # One more than the page: is there a next one.
    rows = await feed_page(
        gate.reader.read, position["s"], position["c"], horizon_text, labels, request.limit + 1, position["o"]
    )
    page = rows[: request.limit]
    last = page[-1] if page else {"seq": position["s"], "key": position["o"], "change_id": position["c"]}
    return ChangesFeed(
        changes=[_change(group) for group in group_changes(page)],
        next_cursor=encode_cursor(_KIND, s=last["seq"], o=last["key"], c=last["change_id"]),
        more=len(rows) > request.limit,
    )


async def latest_changes(gate: Gate, label: str | None, limit: int = LATEST) -> list[FeedChange]:
    """The newest `limit` changes (of one label or type, or all), oldest first: what a change resource shows."""
    labels = _labels(gate, None if label is None else [label])
    return [_change(group) for group in group_changes(await newest(gate.reader.read, labels, limit, utc_now()))]

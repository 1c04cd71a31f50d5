"""Windows of the change feed: a page of changes read from a bounded window of a numeric index, so it costs its
page however many records the graph has gathered before and after it.

Every change record carries `seq_n`, its `seq`'s moment as a number (`YYMMDDhhmmssmmm`: 15 digits, exact in the
double a full-text-style numeric index keeps, and ordered as the moments are). The feed's order is (`seq`,
`change_id`), and a `seq` sorts by its moment first (core/cypher/change_order.py), so a record later in the feed
never has a smaller `seq_n`: every record after a cursor lies at or above the cursor's `seq_n`. FalkorDB answers
a numeric range exactly and reads only the rows inside it, where its string ranges read far past their bounds
and cost every row they read (a bound 1 s past a cursor read 200,000 `seq`s in 1.5 s); a numeric range with
`LIMIT` also stops at the limit, so a probe of a window costs at most its cap.

A page is planned before it is read: a probe answers up to `cap` of the window's `seq_n`s; a window that holds
fewer records than the page wants grows (its span times GROWTH, up to the horizon), one that holds `cap` or more
shrinks to a quantile of what the probe saw, and a window of one millisecond is read whole however full it is.
Pure here; services/change_feed.py runs the probes.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from write_gate.core.clock import as_utc_text
from write_gate.core.decay import parse_at

SEQ_NUMBER = "seq_n"
_MOMENT = 24  # an `at` is 24 characters (core/clock.py); a `seq` is one, perhaps with `#`s after it
FIRST_SPAN_MS = 1_000
GROWTH = 8
CAP_PER_WANTED = 8  # a probe reads up to this many records per record the page wants
TOP = 999_999_999_999_999  # above every `seq_n`
_CENTURY_MS = 100 * 366 * 86_400_000  # `seq_n` holds a year's last two digits: no window reaches further


_LOWEST = "0000-00-00T00:00:00.000"
_HIGHEST = "9999-99-99T99:99:99.999"


def seq_number(seq: str, upper: bool = False) -> int:
    """The number `seq_number_cypher` stores for a `seq` (or an `at`): its moment's digits from the year's last
    two on. A text cut short (a bound, not a stored value) is filled out as the lowest moment it could begin,
    or with `upper` the highest, so every `seq` on the same side of it as text is on that side as a number; a
    text that is no moment at all is 0, or with `upper` TOP."""
    filled = seq[:23] + (_HIGHEST if upper else _LOWEST)[len(seq[:23]) :]
    digits = filled[2:].replace("-", "").replace("T", "").replace(":", "").replace(".", "")
    if len(digits) != 15 or not digits.isdigit() or not filled[:2].isdigit():
        return TOP if upper else 0
    return int(digits)


def _moment(seq: str) -> datetime | None:
    try:
        return parse_at(seq[:_MOMENT]) if len(seq) >= _MOMENT else None
    except ValueError:
        return None


def seq_number_cypher(seq: str) -> str:
    """The Cypher expression of `seq_number` for the text expression `seq` (about 4 µs a record on FalkorDB)."""
    return f"toInteger(replace(replace(replace(replace(substring({seq}, 2, 21), '-', ''), 'T', ''), ':', ''), '.', ''))"


def moment_after(moment: datetime, span_ms: int) -> str:
    """The stamp `span_ms` after `moment`, as `core.clock` writes stamps."""
    return as_utc_text(moment + timedelta(milliseconds=span_ms))


@dataclass(frozen=True)
class Window:
    """Records with `low <= seq_n <= high`; `span_ms` is how far past the anchor `high` reaches (0: to the
    end given), for growing it."""

    low: int
    high: int
    span_ms: int = 0


@dataclass(frozen=True)
class Plan:
    """What to do after a probe: `read` the window (it holds enough or all there is), or probe `next` instead."""

    read: bool
    next: Window


def cap_for(wanted: int) -> int:
    return wanted * CAP_PER_WANTED


def first_window(after_seq: str, horizon: str) -> Window:
    """The window to probe first for the records after `after_seq` (the empty cursor: the oldest kept), up to
    `horizon` (text, as the feed's)."""
    end = seq_number(horizon, upper=True)
    moment = _moment(after_seq)
    if moment is None:
        return Window(seq_number(after_seq), end)
    return Window(seq_number(after_seq), min(end, seq_number(moment_after(moment, FIRST_SPAN_MS))), FIRST_SPAN_MS)


def grown(window: Window, after_seq: str, horizon: str) -> Window | None:
    """The window after `after_seq` GROWTH times as long (up to the horizon); None when it reaches it already."""
    end = seq_number(horizon, upper=True)
    moment = _moment(after_seq)
    if window.high >= end or moment is None:
        return None
    span = max(window.span_ms, FIRST_SPAN_MS) * GROWTH
    while span < _CENTURY_MS and seq_number(moment_after(moment, span)) <= window.high:
        span *= GROWTH  # a shrunk window may reach past the span already
    if span >= _CENTURY_MS:
        return Window(window.low, end, span)
    return Window(window.low, min(end, seq_number(moment_after(moment, span))), span)


def _kept(seen: list[int]) -> int:
    """How many of a full probe's numbers a shrunk window keeps: a quarter of the cap, twice what is wanted."""
    return len(seen) // CAP_PER_WANTED * 2


def plan_after(window: Window, seen: list[int], wanted: int, after_seq: str, horizon: str) -> Plan:
    """After a probe of `window` (after the cursor `after_seq`) saw `seen` (up to `cap_for(wanted)` numbers)."""
    if len(seen) >= cap_for(wanted):
        high = sorted(seen)[_kept(seen)]
        if high >= window.high:  # most of it in its last millisecond: no smaller window holds them
            return Plan(True, window)
        return Plan(False, Window(window.low, max(high, window.low), 0))
    bigger = grown(window, after_seq, horizon) if len(seen) < wanted else None
    return Plan(True, window) if bigger is None else Plan(False, bigger)


def latest_window(now: str) -> Window:
    """The window to probe first for the newest changes: the last second, and every record stamped later."""
    return Window(seq_number(moment_after(parse_at(now), -FIRST_SPAN_MS)), TOP, FIRST_SPAN_MS)


def plan_latest(window: Window, seen: list[int], wanted: int, now: str) -> Plan:
    """As `plan_after`, for a window anchored at its top: it grows back in time, and shrinks up to a quantile."""
    if len(seen) >= cap_for(wanted):
        low = sorted(seen)[len(seen) - 1 - _kept(seen)]
        if low <= window.low:
            return Plan(True, window)
        return Plan(False, Window(low, window.high, 0))
    if len(seen) >= wanted or window.low == 0:
        return Plan(True, window)
    span = max(window.span_ms, FIRST_SPAN_MS) * GROWTH
    reach = moment_after(parse_at(now), -span)
    return Plan(False, Window(seq_number(reach) if reach >= "2000" else 0, window.high, span))

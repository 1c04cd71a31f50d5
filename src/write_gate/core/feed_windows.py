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
narrows (to a guess from the numbers the probe saw, or the middle of what is known), as a search bracketed
between a window known too small and one known too big. Pure here; services/windowed.py runs the probes.

One millisecond can hold more records than a probe reads: a batch's items share their `seq`. Within it the feed's
order is (`seq`, `seq_k`, `change_id`): `seq_k` is the record's `#`s (its place among the subject's changes of that
millisecond) times KEY_SPAN, plus its item's place in the statement that wrote it (a batch's `i`, else 0), under
a numeric index of its own. So a crowded millisecond (`Search.crowded`) is read by a second search over the keys
of that millisecond alone (`KeySearch`), both ranges in one index scan, and a page inside a batch of 10,000 costs
its page; a reader that cannot (the agent tallies' fold) reads the millisecond whole.
"""

import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from write_gate.core.clock import as_utc_text
from write_gate.core.decay import parse_at

SEQ_NUMBER = "seq_n"
SEQ_KEY = "seq_k"
# `seq_k` + 1, which the keyed windows read from the range index: FalkorDB 4.16's range index, built again from a
# snapshot as the engine starts, holds no entry for most records whose value is 0 (every first item of a statement
# with no `#`: tests/integration/test_zero_keys.py), so a window read by `seq_k` missed them after a restart.
SEQ_KEY_INDEXED = "seq_k1"
KEY_SPAN = 2**40  # a `seq_k`'s step per `#`: above any batch's item count, and 4,096 `#`s stay exact in a double
KEY_TOP = 2**53  # above every `seq_k`
_MOMENT = 24  # an `at` is 24 characters (core/clock.py); a `seq` is one, perhaps with `#`s after it
FIRST_SPAN_MS = 1_000
GROWTH = 8
CAP_PER_WANTED = 8  # a probe reads up to this many records per record the page wants
TOP = 999_999_999_999_999  # above every `seq_n`
_CENTURY_MS = 100 * 366 * 86_400_000  # `seq_n` holds a year's last two digits: no window reaches further


_LOWEST = "0000-00-00T00:00:00.000"
_HIGHEST = "9999-99-99T99:99:99.999"


# A `seq` as the gate writes one: a stamp (core/clock.py), then a `#` for each change of its millisecond before it.
_SEQ = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#*")


def is_seq(text: str) -> bool:
    """Whether `text` is a `seq` the gate could have written (a cursor's position, read back)."""
    return _SEQ.fullmatch(text) is not None and _moment(text) is not None


def seq_number(seq: str, upper: bool = False) -> int:
    """The number `seq_number_cypher` stores for a `seq` (or an `at`): its moment's digits from the year's last
    two on. A text cut short (a bound, not a stored value) is filled out as the lowest moment it could begin,
    or with `upper` the highest, so every `seq` on the same side of it as text is on that side as a number; a
    text that is no moment at all is 0, or with `upper` TOP."""
    number = _filled_number(seq, _HIGHEST if upper else _LOWEST)
    if number is None:
        return TOP if upper else 0
    return number


def _filled_number(text: str, filler: str) -> int | None:
    """The digits after the century of `text`'s moment, filled out with `filler`'s; None where it is no stamp."""
    filled = text[:23] + filler[len(text[:23]) :]
    digits = filled[2:].replace("-", "").replace("T", "").replace(":", "").replace(".", "")
    if len(digits) != 15 or not (filled[:2] + digits).isascii() or not (filled[:2] + digits).isdigit():  # not `²`
        return None
    return int(digits)


def number_below(bound: str) -> int:
    """A number above the `seq_n` of every `seq` or `at` (a stamp of this century) that sorts before `bound` as
    text, so `seq_n < it` is a range the numeric index answers exactly that holds every record the text test
    `< bound` picks; that test, past the index, then decides. A full stamp's own millisecond is in it (`…123Z#`
    sorts before `…123[`); a stamp cut short stops at the lowest moment it could begin; a bound that is no
    stamp (or of another century) takes every record, or none."""
    filled = bound[:23] + _LOWEST[len(bound[:23]) :]
    if filled[:2] != "20":
        return TOP + 1 if filled[:2] > "20" else 0
    number = _filled_number(bound, _LOWEST)
    if number is None or any(filled[i] != _LOWEST[i] for i in (4, 7, 10, 13, 16, 19)):
        return TOP + 1
    return number + 1 if len(bound) >= 23 else number


def _moment(seq: str) -> datetime | None:
    try:
        return parse_at(seq[:_MOMENT]) if len(seq) >= _MOMENT else None
    except ValueError:
        return None


def seq_number_cypher(seq: str) -> str:
    """The Cypher expression of `seq_number` for the text expression `seq` (about 4 µs a record on FalkorDB)."""
    return f"toInteger(replace(replace(replace(replace(substring({seq}, 2, 21), '-', ''), 'T', ''), ':', ''), '.', ''))"


def seq_key(seq: str, order: int = 0) -> int:
    """The `seq_k` of a record of `seq` written as the `order`th item of its statement (`seq_key_cypher`)."""
    return (len(seq) - _MOMENT) * KEY_SPAN + order


def seq_key_cypher(seq: str, order: str = "0") -> str:
    """The Cypher expression of `seq_key` for the text expression `seq` and the integer expression `order`."""
    return f"(size({seq}) - {_MOMENT}) * {KEY_SPAN} + {order}"


def _moment_of(number: int) -> datetime | None:
    """The moment a `seq_n` stands for (20YY), or None where the number is no moment (a bound, a midpoint)."""
    digits = f"{number:015d}"
    if len(digits) != 15:
        return None
    text = f"20{digits[0:2]}-{digits[2:4]}-{digits[4:6]}T{digits[6:8]}:{digits[8:10]}:{digits[10:12]}.{digits[12:]}Z"
    try:
        return parse_at(text)
    except ValueError:
        return None


def _halfway(near: datetime | None, far: int) -> int | None:
    """The number of the moment halfway from `near` to the moment of `far`, or None where either is none."""
    far_moment = _moment_of(far)
    if near is None or far_moment is None:
        return None
    return seq_number(as_utc_text(near + (far_moment - near) / 2))


def moment_after(moment: datetime, span_ms: int) -> str:
    """The stamp `span_ms` after `moment`, as `core.clock` writes stamps."""
    return as_utc_text(moment + timedelta(milliseconds=span_ms))


@dataclass(frozen=True)
class Window:
    """Records with `low <= seq_n <= high`."""

    low: int
    high: int
    key_low: int | None = None  # with both: only records of one millisecond (low = high) with keys in them
    key_high: int | None = None

    @property
    def keyed(self) -> bool:
        return self.key_low is not None


def cap_for(wanted: int) -> int:
    return wanted * CAP_PER_WANTED


@dataclass(frozen=True)
class Search:
    """A window's search for its moving end, the other (`fixed`) end given: the high end after a cursor
    (`upward`), the low end for the newest changes. Everything from `fixed` to `edge` is known (`known` records);
    the next probe reads the stretch past `edge` up to `reach`. A stretch that holds fewer records than wanted is
    added to what is known and the next reaches GROWTH times further in time from `anchor` (the cursor's moment,
    or now); one that holds the probe's cap or more is cut short (where what the probe saw suggests, or to its
    last millisecond but one) and probed again, so no probe reads more than its cap, and a window grows past a
    dense stretch only by what the page needs."""

    fixed: int
    edge: int
    reach: int
    upward: bool
    end: int  # as far as the moving end may go: the horizon's number, or 0
    anchor: datetime | None
    span_ms: int = FIRST_SPAN_MS
    known: int = 0
    too_many: int | None = None  # a reach whose stretch held a probe's cap or more
    hint: int | None = None  # where that probe's numbers suggested cutting, when a nearer cut was tried first
    crowded: bool = False  # the window ends in one millisecond (`reach`) that holds more than a probe reads

    @property
    def window(self) -> Window:
        """What a read now reads: from the fixed end to `reach`."""
        return Window(self.fixed, self.reach) if self.upward else Window(self.reach, self.fixed)

    @property
    def stretch(self) -> Window:
        """What the next probe reads: past `edge`, up to `reach`."""
        return Window(self.edge + 1, self.reach) if self.upward else Window(self.reach, self.edge - 1)


@dataclass(frozen=True)
class KeySearch:
    """Records of the millisecond `ms` with `low <= seq_k <= reach`: the reach grows GROWTH times while the window
    holds fewer than wanted, and is cut back (to where the probe's keys suggest, never past a reach known to hold
    too many) while it holds a probe's cap or more."""

    ms: int
    low: int
    reach: int
    too_many: int | None = None

    @property
    def window(self) -> Window:
        return Window(self.ms, self.ms, self.low, self.reach)

    @property
    def stretch(self) -> Window:
        """What the next probe reads: the whole window (a probe's cap bounds it)."""
        return self.window


@dataclass(frozen=True)
class Plan[S: (Search, KeySearch)]:
    """What to do after a probe: `read` the search's window (it holds enough, or all there is, or its last
    millisecond, or key, alone holds more than a probe reads), or probe `next`."""

    read: bool
    next: S


def after_cursor(after_seq: str, horizon: str) -> Search:
    """The first probe for the records after `after_seq` (the empty cursor: from the oldest kept) up to
    `horizon` (text, as the feed's): the second after the cursor, or for a cursor with no moment all of it."""
    return _upward(seq_number(after_seq), _moment(after_seq), seq_number(horizon, upper=True))


def _upward(start: int, moment: datetime | None, end: int) -> Search:
    """The first probe for the records from `start` up to `end`: the second after `moment` (None: all of it)."""
    if end <= start:  # a cursor at the horizon or past it: its own millisecond is all a page may hold
        return Search(start, start - 1, start, True, start, None)
    reach = end if moment is None else min(end, seq_number(moment_after(moment, FIRST_SPAN_MS)))
    return Search(start, start - 1, reach, True, end, moment)


def newest_first(now: str) -> Search:
    """The first probe for the newest changes: those of the last second, and every one stamped later."""
    moment = parse_at(now)
    return Search(TOP, TOP + 1, seq_number(moment_after(moment, -FIRST_SPAN_MS)), False, 0, moment)


def before_cursor(cursor_at: str | None, now: str) -> Search:
    """The first probe for records older than a newest-first page's cursor (its moment; None: from the
    newest): the second before it, and for no cursor every record stamped later than that too."""
    if cursor_at is None:
        return newest_first(now)
    fixed, moment = seq_number(cursor_at, upper=True), _moment(cursor_at)
    if moment is None:
        return Search(fixed, fixed + 1, 0, False, 0, None)
    reach = min(fixed, seq_number(moment_after(moment, -FIRST_SPAN_MS)))
    return Search(fixed, fixed + 1, reach, False, 0, moment)


def _further(search: Search) -> Search | None:
    """The next stretch, past `reach`: halfway to a reach known to hold too many, else GROWTH times further in time
    from the anchor; up to the end (None at it)."""
    if search.reach == search.end:
        return None
    search = replace(search, crowded=False)
    edge, span = search.reach, search.span_ms
    if search.too_many is not None and search.too_many != edge:
        low, high = min(edge, search.too_many), max(edge, search.too_many)
        guess = search.hint
        if guess is None or not low < guess < high:
            halfway = _halfway(_moment_of(edge), search.too_many)
            guess = halfway if halfway is not None else (edge + search.too_many) // 2
        return replace(search, edge=edge, reach=guess if low < guess < high else search.too_many, hint=None)
    search = replace(search, too_many=None)
    if search.anchor is None:
        return replace(search, edge=edge, reach=search.end)
    sign = 1 if search.upward else -1
    while span < _CENTURY_MS:
        span *= GROWTH
        moment = moment_after(search.anchor, sign * span)
        reach = seq_number(moment) if moment >= "2000" else 0
        if (reach > edge) if search.upward else (reach < edge):
            reach = min(reach, search.end) if search.upward else max(reach, search.end)
            return replace(search, edge=edge, reach=reach, span_ms=span)
    return replace(search, edge=edge, reach=search.end, span_ms=span)


def plan(search: Search, seen: list[int], wanted: int) -> Plan[Search]:
    """After a probe of `search.stretch` saw `seen` (up to `cap_for(wanted)` of its records' numbers)."""
    if len(seen) >= cap_for(wanted):
        step = 1 if search.upward else -1
        if search.reach == search.edge + step:
            return Plan(True, replace(search, crowded=True))  # one millisecond holds more than a probe reads
        return Plan(False, _cut(search, seen))
    known = replace(search, known=search.known + len(seen))
    if known.known >= wanted:
        return Plan(True, known)
    further = _further(known)
    return Plan(True, known) if further is None else Plan(False, further)


def _cut(search: Search, seen: list[int]) -> Search:
    """A stretch that held a probe's cap or more, cut short. The probe's numbers are some of the stretch's, not
    the nearest (the engine answers in the order it stored them: oldest first, mostly), so two guesses: the
    bound that keeps a quarter of them, and the moment halfway from the stretch's near end to its reach (which
    always cuts off half). After a cursor the oldest-first numbers make the quantile good: the nearer of the two,
    but never before the first number seen (the stretch keeps a record). For the newest they make it poor: the
    nearer of the two to now. Where the cut is the stretch's last millisecond, everything before it; the quantile
    is kept as the hint for the next stretch."""
    step = 1 if search.upward else -1
    ordered = sorted(seen) if search.upward else sorted(seen, reverse=True)
    quantile = ordered[_kept(seen)]
    near = _moment_of(search.edge + step)
    if near is None and not search.upward:
        near = search.anchor  # the newest: from now (the edge is above every moment)
    halfway = _halfway(near, search.reach)
    if halfway is None:
        cut = quantile
    elif search.upward:
        cut = min(quantile, max(halfway, ordered[0]))
    else:
        cut = max(quantile, halfway)
    if cut == search.reach:
        cut -= step
    return replace(search, reach=cut, too_many=search.reach, hint=quantile if cut != quantile else None)


def grown_to_read(search: Search, found: int) -> Search | None:
    """The search to go on with after its window's read found `found` changes, fewer than wanted (a change's
    records share it, or some sit before the cursor in its millisecond); None when the window reaches the end."""
    further = _further(search)
    return None if further is None else replace(further, known=found)


def after_millisecond(search: Search, ms: int) -> Search | None:
    """An upward search's records after the millisecond `ms` (one it has read to its end), up to its end."""
    return None if ms >= search.end else _upward(ms + 1, _moment_of(ms), search.end)


def keys_from(ms: int, low: int, wanted: int) -> KeySearch:
    """The first probe of `ms`'s records from the key `low` on (a batch's keys run on by one from an item to the
    next: twice the page is a good first guess)."""
    return KeySearch(ms, low, min(KEY_TOP, low + 2 * wanted))


def plan_keys(search: KeySearch, seen: list[int], wanted: int) -> Plan[KeySearch]:
    """After a probe of `search.window` saw `seen` (up to `cap_for(wanted)` keys). A single key holding a cap or
    more (one change of many records) is read whole."""
    if len(seen) >= cap_for(wanted):
        if search.reach == search.low:
            return Plan(True, search)
        cut = min(max(sorted(seen)[_kept(seen)], search.low), search.reach - 1)
        return Plan(False, replace(search, reach=cut, too_many=search.reach))
    if len(seen) >= wanted or search.reach >= KEY_TOP:
        return Plan(True, search)
    if search.too_many is not None:
        if search.too_many - search.reach <= 1:
            return Plan(True, replace(search, reach=search.too_many))  # one key past it holds too many
        return Plan(False, replace(search, reach=(search.reach + search.too_many) // 2))
    return Plan(False, replace(search, reach=min(KEY_TOP, search.low + (search.reach - search.low + 1) * GROWTH)))


def _kept(seen: list[int]) -> int:
    """How many of a full probe's numbers a cut stretch keeps: a quarter of the cap, twice what is wanted."""
    return len(seen) // CAP_PER_WANTED * 2

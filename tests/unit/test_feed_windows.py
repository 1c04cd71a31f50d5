"""The change feed's windows (core/feed_windows.py): `seq_n` orders as `seq` does, bounds cut short or malformed
stay on their side, and a search always ends: simulated against random feeds (the probe answers some of the
window's numbers, in any order), it settles within the probes the service allows on a window that holds what the
page wants, or everything there is, or whose narrowing no millisecond allows."""

import random
from datetime import datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from write_gate.core.feed_windows import (
    KEY_SPAN,
    KEY_TOP,
    TOP,
    after_cursor,
    after_millisecond,
    cap_for,
    keys_from,
    newest_first,
    number_below,
    plan,
    plan_keys,
    seq_key,
    seq_number,
)
from write_gate.services.windowed import MAX_PROBES

moments = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2099, 12, 31)).map(
    lambda d: d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z"
)
seqs = st.tuples(moments, st.integers(0, 3)).map(lambda pair: pair[0] + "#" * pair[1])


@given(seqs, seqs)
def test_seq_n_orders_as_seq_does(a: str, b: str) -> None:
    if a <= b:
        assert seq_number(a) <= seq_number(b)


@given(seqs, st.integers(0, 24))
def test_a_bound_cut_short_stays_on_its_side(seq: str, cut: int) -> None:
    bound = seq[:cut]
    assert seq_number(bound) <= seq_number(seq)  # as a lower bound: every seq at or past it, numbered no lower
    assert seq_number(bound, upper=True) >= seq_number(seq)  # as an upper one: no higher


@given(st.text(max_size=30))
def test_any_text_is_a_number_and_never_an_error(text: str) -> None:
    assert 0 <= seq_number(text) <= TOP and 0 <= seq_number(text, upper=True) <= TOP
    assert after_cursor(text, "2026-11-28T10:00:00.000Z").window.low <= TOP


def near_bound(seq: str, cut: int, edit: int, char: str) -> str:
    """A prune's cutoff where a loose bound shows: a stamp, cut short, with a character changed or added."""
    bound = seq[:cut]
    if edit == 0 or not bound:
        return bound
    if edit == 1:
        return bound[:-1] + chr(ord(bound[-1]) + 1)
    return bound + char


@given(seqs, seqs, st.integers(0, 25), st.integers(0, 2), st.characters(max_codepoint=200))
def test_the_prunes_window_holds_every_record_before_the_cutoff(seq: str, other: str, cut: int, edit: int, char: str):
    """`seq_n < number_below(cutoff)` (the prune's index window) holds every record whose `seq` or `at` sorts
    before the cutoff as text; tests/integration/test_exact_ranges.py holds the statements to it on the engine."""
    for bound in (near_bound(other, cut, edit, char), near_bound(seq, cut, edit, char)):
        if seq < bound:
            assert seq_number(seq) < number_below(bound), bound


@given(st.text(max_size=30), seqs)
def test_any_cutoff_gives_a_window(text: str, seq: str) -> None:
    assert 0 <= number_below(text) <= TOP + 1
    if seq < text:
        assert seq_number(seq) < number_below(text), text


def test_a_stamps_window_ends_past_its_own_millisecond() -> None:
    assert number_below("2026-11-28T10:00:02.846Z") == 261128100002847  # `…846Z` itself is tested past the index
    assert number_below("2026-11-28T10:0") == 261128100000000
    assert (number_below("2026-11-28T10:00:02.84:"), number_below("21"), number_below("1")) == (TOP + 1, TOP + 1, 0)


def test_the_moment_is_its_digits() -> None:
    assert seq_number("2026-11-28T10:00:02.846Z##") == 261128100002846
    assert seq_number("") == 0 and seq_number("", upper=True) == TOP
    assert seq_number("20²") == 0 and number_below("2026-1²") == TOP + 1  # a digit to isdigit(), not to int()


def feed(rng: random.Random) -> list[int]:
    """Record numbers over a day, in bursts: some milliseconds hold a batch's hundreds of records."""
    out: list[int] = []
    for _ in range(rng.randrange(1, 40)):
        at = datetime(2026, 11, 28, rng.randrange(24), rng.randrange(60), rng.randrange(60), rng.randrange(1000) * 1000)
        text = at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"
        out += [seq_number(text)] * rng.choice((1, 1, 3, 20, 400))
    return out


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 120), st.booleans())
def test_a_search_settles_on_a_window_that_serves_the_page(seed: int, wanted: int, upward: bool) -> None:
    rng = random.Random(seed)
    numbers = feed(rng)
    horizon, now = "2026-11-28T23:59:59.999Z", "2026-11-29T00:00:00.000Z"
    cursor = rng.choice(["", "2026-11-28T00:00:00.000Z", f"2026-11-28T{rng.randrange(24):02d}:30:00.000Z"])
    search = after_cursor(cursor, horizon) if upward else newest_first(now)
    for _ in range(MAX_PROBES):
        stretch = search.stretch
        inside = [n for n in numbers if stretch.low <= n <= stretch.high]
        rng.shuffle(inside)  # the engine's order is no order
        step = plan(search, inside[: cap_for(wanted)], wanted)
        search = step.next
        if step.read:
            break
    else:
        raise AssertionError("no window after MAX_PROBES")
    window = search.window
    held = [n for n in numbers if window.low <= n <= window.high]
    ahead = [n for n in numbers if (n >= window.low if upward else n <= window.high)]
    assert len(held) >= min(wanted, len(ahead))  # enough for the page, or everything left
    # No dearer than a probe's cap, beside what the window's last millisecond alone holds (a batch's records).
    edge = window.high if upward else window.low
    assert len(held) - held.count(edge) < cap_for(wanted) + wanted


@given(seqs, st.integers(0, 100_000), seqs, st.integers(0, 100_000))
def test_seq_k_orders_a_milliseconds_records_as_seq_then_item_does(a: str, i: int, b: str, j: int) -> None:
    if a[:24] == b[:24] and (a, i) < (b, j):  # one millisecond: `#`s first, then the item's place
        assert seq_key(a, i) < seq_key(b, j)
    assert seq_key(a, i) < KEY_TOP


def crowd(rng: random.Random) -> list[int]:
    """One millisecond's keys: batches' items (0 on, by one; two batches' interleave), single writes (0), a few
    changes of a subject again (`#`), and a delete's many records sharing one key."""
    out: list[int] = []
    for _ in range(rng.randrange(1, 4)):
        out += range(rng.choice((5, 100, 3000)))
    out += [0] * rng.randrange(3) + [KEY_SPAN + k for k in range(rng.randrange(30))]
    out += [rng.randrange(50)] * rng.choice((1, 500))
    return out


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 120))
def test_a_key_search_settles_on_a_window_that_serves_the_page(seed: int, wanted: int) -> None:
    rng = random.Random(seed)
    keys = crowd(rng)
    low = rng.choice([0, rng.choice(keys)])
    search = keys_from(seq_number("2026-11-28T10:00:00.123Z"), low, wanted)
    for _ in range(MAX_PROBES):
        inside = [k for k in keys if search.low <= k <= search.reach]
        rng.shuffle(inside)  # the engine's order is no order
        step = plan_keys(search, inside[: cap_for(wanted)], wanted)
        search = step.next
        if step.read:
            break
    else:
        raise AssertionError("no window after MAX_PROBES")
    held = [k for k in keys if search.low <= k <= search.reach]
    ahead = [k for k in keys if k >= search.low]
    assert search.low == low and len(held) >= min(wanted, len(ahead))  # enough for the page, or all that is left
    # No dearer than a probe's cap, beside what the window's last key alone holds (one change's records).
    assert len(held) - held.count(search.reach) < cap_for(wanted) + wanted


def test_after_a_millisecond_the_search_starts_at_the_next() -> None:
    ms = seq_number("2026-11-28T10:00:00.999Z")
    search = after_cursor("2026-11-28T09:00:00.000Z", "2026-11-28T11:00:00.000Z")
    after = after_millisecond(search, ms)
    assert after is not None and after.fixed == ms + 1 and after.reach == seq_number("2026-11-28T10:00:01.999Z")
    assert after_millisecond(search, search.end) is None

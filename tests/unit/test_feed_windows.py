"""The change feed's windows (core/feed_windows.py): `seq_n` orders as `seq` does, bounds cut short or malformed
stay on their side, and a plan always moves: it reads, or probes a window that is strictly smaller or larger."""

from datetime import datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from write_gate.core.feed_windows import (
    TOP,
    Window,
    cap_for,
    first_window,
    grown,
    plan_after,
    plan_latest,
    seq_number,
)

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
    window = first_window(text, "2026-11-28T10:00:00.000Z")
    assert window.low <= TOP


def test_the_moment_is_its_digits() -> None:
    assert seq_number("2026-11-28T10:00:02.846Z##") == 261128100002846
    assert seq_number("") == 0 and seq_number("", upper=True) == TOP


@settings(max_examples=200)
@given(st.lists(st.integers(261128100000000, 261128100959999), max_size=300), st.integers(1, 60))
def test_a_plan_reads_or_moves(seen: list[int], wanted: int) -> None:
    cursor, horizon = "2026-11-28T10:00:00.000Z", "2026-11-28T10:09:59.999Z"
    window = first_window(cursor, horizon)
    seen = [n for n in seen if window.low <= n <= window.high][: cap_for(wanted)]
    plan = plan_after(window, seen, wanted, cursor, horizon)
    if not plan.read:
        smaller = plan.next.high < window.high
        larger = plan.next.high > window.high
        assert (smaller and len(seen) >= cap_for(wanted)) or (larger and len(seen) < wanted)
        assert plan.next.low == window.low
    latest = Window(261128100000000, TOP, 1000)
    plan = plan_latest(latest, seen[: cap_for(wanted)], wanted, "2026-11-28T10:10:00.000Z")
    assert plan.read or plan.next.low != latest.low


def test_growing_stops_at_the_horizon() -> None:
    cursor, horizon = "2026-11-28T10:00:00.000Z", "2026-11-28T10:00:05.000Z"
    window = first_window(cursor, horizon)
    bigger = grown(window, cursor, horizon)
    assert bigger is not None and bigger.high == seq_number(horizon, upper=True)
    assert grown(bigger, cursor, horizon) is None

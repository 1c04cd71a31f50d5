"""The writes a gate is running hold the change feed's horizon below the oldest one's start, and a write whose
outcome is unknown holds it for the linger time more."""

from contextlib import nullcontext

import pytest

from write_gate.core.change_feed import horizon
from write_gate.core.decisions import Stamp
from write_gate.services.call_stamps import CallStamp
from write_gate.services.writes_in_flight import WritesInFlight

NOW = "2026-11-30T12:00:10.000Z"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_horizon_is_the_settle_window_or_just_before_the_oldest_write_whichever_is_earlier() -> None:
    assert horizon(NOW, 1.0) == "2026-11-30T12:00:09.000Z"
    assert horizon(NOW, 1.0, None) == "2026-11-30T12:00:09.000Z"
    assert horizon(NOW, 1.0, "2026-11-30T12:00:05.250Z") == "2026-11-30T12:00:05.249Z"
    assert horizon(NOW, 1.0, "2026-11-30T12:00:09.500Z") == "2026-11-30T12:00:09.000Z"
    assert horizon(NOW, 0.0, NOW) == "2026-11-30T12:00:09.999Z"  # a stamp taken in the write's first millisecond


def test_the_oldest_running_write_is_the_earliest_started_and_none_once_all_ended() -> None:
    writes = WritesInFlight(linger_seconds=10)
    assert writes.oldest() is None
    with writes.running():
        first = writes.oldest()
        assert first is not None
        with writes.running():
            assert writes.oldest() == first
        assert writes.oldest() == first
    assert writes.oldest() is None


@pytest.mark.parametrize("how", ["raised", "unknown"])
def test_a_write_whose_outcome_is_unknown_holds_the_horizon_for_the_linger_time(how: str) -> None:
    clock = Clock()
    writes = WritesInFlight(linger_seconds=10, clock=clock)
    with pytest.raises(TimeoutError) if how == "raised" else nullcontext(), writes.running() as outcome:
        started = writes.oldest()
        if how == "raised":
            raise TimeoutError
        outcome.unknown = True
    assert writes.oldest() == started
    clock.now = 9.9
    assert writes.oldest() == started
    clock.now = 10.1
    assert writes.oldest() is None


def test_a_calls_stamp_is_taken_again_once_a_quarter_of_the_settle_window_old_and_never_without_a_window() -> None:
    """services/call_stamps.py: a long call's statements each commit soon after their stamp."""
    clock, taken = Clock(), iter(range(100))

    def take() -> Stamp:
        return Stamp("v", f"t{next(taken)}", "agent")

    stamps = CallStamp(take, settle_seconds=1.0, clock=clock)
    first = stamps.current()
    clock.now = 0.25
    assert stamps.current() is first  # not older than a quarter of the window
    clock.now = 0.26
    second = stamps.current()
    assert second.now == "t1" and stamps.current() is second
    clock.now = 0.52
    assert stamps.current().now == "t2"
    assert WritesInFlight(linger_seconds=1.5).settle_seconds == 1.5
    never = CallStamp(take, settle_seconds=0.0, clock=clock)
    clock.now = 1_000.0
    assert never.current() is never.current() and never.current().now == "t3"

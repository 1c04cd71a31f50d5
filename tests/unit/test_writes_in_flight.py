"""The writes a gate is running hold the change feed's horizon below the oldest one's start, and a write whose
outcome is unknown holds it for the linger time more."""

from contextlib import nullcontext

import pytest

from write_gate.core.change_feed import horizon
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

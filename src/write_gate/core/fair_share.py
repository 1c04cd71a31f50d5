"""A fair share per agent in one gate process (issue 37, item 3; docs/fleets/limits.md): at most N calls in flight,
and a budget of read cost per window. Pure: the caller brings the clock and does the waiting.

A read's cost is what the engine answered it: one per statement plus one per row (engines.counted_reads), known
only once the call has run. So the budget is a bucket of cost units that refills at `budget / window` a second,
a read is admitted while the agent's bucket is above zero, and its cost is taken afterwards: one costly read may
overdraw the bucket, and the agent's next reads wait until it has refilled above zero. Writes are never charged.
"""

import math
from dataclasses import dataclass

from write_gate.core.model import ErrorCode, GateRejection

IN_FLIGHT = "max_calls_in_flight"
READ_BUDGET = "read_budget"
# An agent at its in-flight cap hears to come back in this long: a call of its own has to end first, and when
# that is the gate cannot know.
IN_FLIGHT_RETRY_SECONDS = 1.0


@dataclass(frozen=True)
class Share:
    """One agent's limits: its grant's, else the server's defaults."""

    calls_in_flight: int
    read_budget: int
    window_seconds: float


@dataclass
class _Bucket:
    level: float
    at: float  # the clock when `level` was true


class FairShares:
    """Every agent's calls in flight and read bucket in this process, and how often each was held back."""

    def __init__(self) -> None:
        self._in_flight: dict[str, int] = {}
        self._buckets: dict[str, _Bucket] = {}
        self.held_back: dict[str, dict[str, int]] = {}  # agent -> limit -> calls refused by it

    # --- calls in flight ---------------------------------------------------------------------------------------

    def enter(self, agent: str, share: Share) -> bool:
        """One more call of the agent in flight, if its cap allows (False: nothing counted)."""
        now = self._in_flight.get(agent, 0)
        if now >= share.calls_in_flight:
            return False
        self._in_flight[agent] = now + 1
        return True

    def leave(self, agent: str) -> None:
        left = self._in_flight.get(agent, 1) - 1
        if left > 0:
            self._in_flight[agent] = left
        else:
            self._in_flight.pop(agent, None)

    def too_many(self, agent: str, share: Share) -> GateRejection:
        self._held(agent, IN_FLIGHT)
        most = share.calls_in_flight
        return GateRejection(
            ErrorCode.RATE_LIMITED,
            f"this agent has {most} calls in flight on this gate, its most; retry in {IN_FLIGHT_RETRY_SECONDS:g} "
            "seconds, once one has answered",
            retry_after_seconds=IN_FLIGHT_RETRY_SECONDS,
            limit=IN_FLIGHT,
            max=most,
            shared="process",
        )

    # --- the read budget ---------------------------------------------------------------------------------------

    def _bucket(self, agent: str, share: Share, now: float) -> _Bucket:
        bucket = self._buckets.get(agent)
        if bucket is None:
            bucket = self._buckets[agent] = _Bucket(float(share.read_budget), now)
        elif now > bucket.at:  # a clock that moved back refills nothing
            rate = share.read_budget / share.window_seconds
            bucket.level = min(float(share.read_budget), bucket.level + (now - bucket.at) * rate)
            bucket.at = now
        else:
            bucket.level = min(bucket.level, float(share.read_budget))  # a smaller budget applies at once
        return bucket

    def check_read(self, agent: str, share: Share, now: float) -> None:
        """A read is admitted while the agent's bucket is above zero; RATE_LIMITED else, with when it will be."""
        bucket = self._bucket(agent, share, now)
        if bucket.level > 0:
            return
        self._held(agent, READ_BUDGET)
        rate = share.read_budget / share.window_seconds
        # Rounded up to a tenth, never 0: at that time the bucket holds more than nothing.
        seconds = max(0.1, math.ceil(round(-bucket.level / rate * 10, 6) + 1e-9) / 10)
        raise GateRejection(
            ErrorCode.RATE_LIMITED,
            f"over this agent's read budget of {share.read_budget} a {share.window_seconds:g} s window on this "
            f"gate (a statement and each row the engine answers count one); retry in {seconds:g} seconds",
            retry_after_seconds=seconds,
            limit=READ_BUDGET,
            max=share.read_budget,
            window_seconds=share.window_seconds,
            shared="process",
        )

    def charge(self, agent: str, share: Share, cost: int, now: float) -> None:
        """A read's cost, taken once it has run (the bucket may go below zero)."""
        self._bucket(agent, share, now).level -= cost

    def _held(self, agent: str, limit: str) -> None:
        counts = self.held_back.setdefault(agent, {})
        counts[limit] = counts.get(limit, 0) + 1

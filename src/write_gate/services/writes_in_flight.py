"""The writes a gate is running, each by the moment it began, so the change feed never steps past one.

A write's changes are stamped when it decides them and committed when its statement ends, later (a batch's
statement is stamped as it is sent, services/call_stamps.py, and commits up to a fraction of a second after),
while other agents' writes, stamped later, commit and are read. A reader whose horizon (`now - settle`,
core/change_feed.py) passed a change's stamp before it committed would never be answered it. The horizon therefore
also stays below the start of the oldest write this gate is running, with any settle window, 0 included: every
stamp a write makes is taken after it began. Writes through other gate processes rely on the settle window alone.

A write whose outcome is unknown (cancelled by its client, or the engine did not answer in time) may still commit:
it is held `linger_seconds` longer, the settle window, as a write through another gate is (a wait as long as the
engine may still take over it would hold every reader back as long, for a write an engine that died took with it).
"""

import itertools
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from write_gate.core.clock import utc_now

DEFAULT_LINGER_SECONDS = 1.0  # WRITE_GATE_CHANGE_SETTLE_SECONDS's default


@dataclass
class Outcome:
    """What a write's caller learnt of its end: `unknown` when it may still commit."""

    unknown: bool = False


class WritesInFlight:
    def __init__(self, linger_seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._linger = linger_seconds
        self._clock = clock
        self._tokens = itertools.count()
        self._running: dict[int, str] = {}
        self._lingering: dict[int, tuple[str, float]] = {}  # started, held until (clock)

    @contextmanager
    def running(self) -> Iterator[Outcome]:
        """Around one write, from before it stamps anything to its end. An exception (a cancellation among
        them) leaves its outcome unknown."""
        token = next(self._tokens)
        self._running[token] = utc_now()
        outcome = Outcome()
        try:
            yield outcome
        except BaseException:
            outcome.unknown = True
            raise
        finally:
            started = self._running.pop(token)
            if outcome.unknown:
                self._lingering[token] = (started, self._clock() + self._linger)

    @property
    def settle_seconds(self) -> float:
        """The settle window: how long a write of unknown outcome is held (services/call_stamps.py reads it)."""
        return self._linger

    def oldest(self) -> str | None:
        """The start (as `core.clock` writes it) of the oldest write that may still commit; None when none may."""
        now = self._clock()
        self._lingering = {token: held for token, held in self._lingering.items() if held[1] > now}
        starts = [*self._running.values(), *(started for started, _until in self._lingering.values())]
        return min(starts, default=None)

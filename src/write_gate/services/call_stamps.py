"""A call's stamp, taken again as it ages, so that each statement the call sends commits soon after its stamp.

The change feed answers a change only once its stamp is `settle` seconds old (core/change_feed.py), so a reader
through another gate never steps past a change that commits within `settle` of its stamp. A call that sends
statement after statement (a batch's chunks, the memory tools' statement per entity) used to stamp them all as it
began, and so committed its last ones long after their stamp: a follower through another gate missed every one of
a 10,000-item batch, whose planning alone took a second before its first chunk was sent. Each statement now
carries a stamp at most a quarter of the settle window old when it is sent, which leaves the rest of the window
to the statement itself. With no window (0) the feed promises nothing to another gate's readers, and a call keeps
its first stamp (its own gate's readers wait for it as a write in flight: services/writes_in_flight.py).
"""

import time
from collections.abc import Callable

from write_gate.core.decisions import Stamp

MAX_AGE_SHARE = 0.25  # of the settle window


class CallStamp:
    def __init__(self, take: Callable[[], Stamp], settle_seconds: float, clock: Callable[[], float] = time.monotonic):
        self._take = take
        self._max_age = settle_seconds * MAX_AGE_SHARE
        self._renews = settle_seconds > 0
        self._clock = clock
        self._stamp = take()
        self._taken = clock()

    def current(self) -> Stamp:
        """The stamp for a statement about to be sent: the last one taken, or a new one once it has aged."""
        if self._renews and self._clock() - self._taken > self._max_age:
            self._stamp, self._taken = self._take(), self._clock()
        return self._stamp

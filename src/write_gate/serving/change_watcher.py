"""Notices every change on the graph, by any gate: polls the change records every
WRITE_GATE_CHANGE_POLL_SECONDS (at once when nudged, after this gate's own writes) while someone listens, and
reports the labels and types that changed. It polls from a little before the newest stamp it saw (the overlap,
for changes that commit late or come from a gate whose clock lags) and reports no change twice. A failed poll
(the engine away) is logged once and tried again at each round."""

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from write_gate.core.change_feed import SeenChanges
from write_gate.core.clock import utc_now
from write_gate.core.cypher.change_feed import changed_areas
from write_gate.core.cypher.statement import Statement
from write_gate.engines import BackendError, BackendUnavailable

logger = logging.getLogger(__name__)

BATCH = 1000  # change rows per poll statement; a fuller poll asks again from where it stopped
OVERLAP_SECONDS = 10.0  # how late a change may commit after its stamp (or its gate's clock lag) and be noticed

Read = Callable[[Statement], Awaitable[list[dict[str, Any]]]]


class ChangeWatcher:
    def __init__(
        self,
        read: Read,
        poll_seconds: float,
        notify: Callable[[set[str]], Awaitable[None]],
        listening: Callable[[], bool],
    ) -> None:
        self._read = read
        self._poll_seconds = poll_seconds
        self._notify = notify
        self._listening = listening
        self._seen = SeenChanges(OVERLAP_SECONDS, utc_now())
        self._nudged = anyio.Event()
        self._failing = False

    def nudge(self) -> None:
        """Poll now: this gate has just written. With no one listening, only the starting point moves to now,
        without waking the loop: a write load kept it turning once a write for nothing."""
        if self._listening():
            self._nudged.set()
        else:
            self._seen = SeenChanges(OVERLAP_SECONDS, utc_now())

    async def poll_once(self) -> set[str]:
        """The labels and types changed since the last poll (none reported twice)."""
        since, labels = self._seen.poll_from(), set()
        while True:
            rows = await self._read(changed_areas(since, BATCH))
            labels |= self._seen.fresh(rows)
            if len(rows) < BATCH or rows[-1]["at"] == since:
                return labels
            since = rows[-1]["at"]

    async def run(self) -> None:
        """Until cancelled. Idle (no listener), it only keeps its starting point at now."""
        while True:
            if self._poll_seconds > 0:
                with anyio.move_on_after(self._poll_seconds):
                    await self._nudged.wait()
            else:
                await self._nudged.wait()
            self._nudged = anyio.Event()
            if not self._listening():
                self._seen = SeenChanges(OVERLAP_SECONDS, utc_now())
                continue
            try:
                if labels := await self.poll_once():
                    await self._notify(labels)
            except Exception as exc:  # a background task: log it, keep serving, try again at the next round
                if not self._failing:  # once per outage, not once a second
                    engine = isinstance(exc, BackendUnavailable | BackendError)
                    logger.warning("changes not polled (tried again each round): %s", exc, exc_info=not engine)
                self._failing = True
                continue
            if self._failing:
                logger.info("changes polled again")
                self._failing = False

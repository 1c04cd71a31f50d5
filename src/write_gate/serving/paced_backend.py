"""An engine that background work shares with the agents at a bounded share of its time.

The statistics keeper works off whatever the writes left it (a bulk ingest's subjects to count, an old history's
tallies) statement after statement. Back to back, its statements hold the engine's write lock most of the time,
and every agent's write queues behind one of them. Through this wrapper each statement is followed by a pause in
proportion to how long it took, so the keeper uses at most `share` of the engine's time and an agent's write meets
one of its statements at most that often. A backlog takes longer to work off; nothing waits on it but the keeper
(a `get_graph_stats` folds what is left itself)."""

import time
from collections.abc import Awaitable, Callable

import anyio

from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend, Row
from write_gate.serving.wrapped_backend import WrappedBackend


class PacedBackend(WrappedBackend):
    def __init__(self, inner: GraphBackend, share: float) -> None:
        if not 0 < share <= 1:
            raise ValueError(f"a share of the engine's time is in (0, 1], not {share}")
        super().__init__(inner)
        self._rest = (1 - share) / share  # seconds of pause for each second of statement

    async def _paced(self, run: Callable[[Statement], Awaitable[list[Row]]], statement: Statement) -> list[Row]:
        started = time.monotonic()
        rows = await run(statement)  # an error passes at once: nothing ran to pause after
        await anyio.sleep((time.monotonic() - started) * self._rest)
        return rows

    async def write(self, statement: Statement) -> list[Row]:
        return await self._paced(self.inner.write, statement)

    async def read(self, statement: Statement) -> list[Row]:
        return await self._paced(self.inner.read, statement)

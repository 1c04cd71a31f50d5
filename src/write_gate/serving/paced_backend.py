"""An engine that background work shares with the agents at a bounded share of its time.

The statistics keeper works off whatever the writes left it (a bulk ingest's subjects to count, an old history's
tallies) statement after statement. Back to back, its statements hold the engine's write lock most of the time,
and every agent's write queues behind one of them. Through this wrapper each statement is followed by a pause in
proportion to how long it took, so the keeper uses at most `share` of the engine's time and an agent's write meets
one of its statements at most that often. A backlog takes longer to work off; nothing waits on it but the keeper
(a `get_graph_stats` folds what is left itself)."""

import time

import anyio

from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend, Row


class PacedBackend:
    def __init__(self, inner: GraphBackend, share: float) -> None:
        if not 0 < share <= 1:
            raise ValueError(f"a share of the engine's time is in (0, 1], not {share}")
        self.inner = inner
        self.dialect = inner.dialect
        self._rest = (1 - share) / share  # seconds of pause for each second of statement

    async def write(self, statement: Statement) -> list[Row]:
        started = time.monotonic()
        rows = await self.inner.write(statement)
        await anyio.sleep((time.monotonic() - started) * self._rest)
        return rows

    async def read(self, statement: Statement) -> list[Row]:
        started = time.monotonic()
        rows = await self.inner.read(statement)
        await anyio.sleep((time.monotonic() - started) * self._rest)
        return rows

    async def ensure_index(self, label: str, prop: str, *, relationship: bool = False) -> None:
        await self.inner.ensure_index(label, prop, relationship=relationship)

    async def ensure_unique(self, label: str, prop: str) -> None:
        await self.inner.ensure_unique(label, prop)

    async def ensure_text_index(self, label: str) -> bool:
        return await self.inner.ensure_text_index(label)

    async def ping(self) -> None:
        await self.inner.ping()

    async def close(self) -> None:
        await self.inner.close()

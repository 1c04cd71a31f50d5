"""The statistics keeper's engine (serving/paced_backend.py): each statement followed by a pause in proportion to
its time, so the keeper takes at most its share of the engine. What that buys an agent's writes is measured, not
asserted: bench/keeper_share.py. Here: the pause is at least what the share implies, answers and errors pass
through unchanged, and a share outside (0, 1] is refused."""

import time
from collections.abc import Awaitable, Callable

import pytest
from pydantic import ValidationError

from write_gate.core.cypher.statement import Statement
from write_gate.engines import BackendError, GraphBackend, Row
from write_gate.serving.config import Settings
from write_gate.serving.paced_backend import PacedBackend

pytestmark = pytest.mark.anyio

# A read that keeps the engine busy for some milliseconds on any machine.
BUSY = Statement("UNWIND range(1, 300000) AS x RETURN count(x) AS n, sum(x) % 7 AS r")


class Stopwatch:
    """The engine as the paced one calls it: how long its statements themselves took."""

    def __init__(self, inner: GraphBackend) -> None:
        self.inner, self.dialect, self.spent = inner, inner.dialect, 0.0

    async def _timed(self, run: Callable[[Statement], Awaitable[list[Row]]], statement: Statement) -> list[Row]:
        started = time.monotonic()
        try:
            return await run(statement)
        finally:
            self.spent += time.monotonic() - started

    async def read(self, statement: Statement) -> list[Row]:
        return await self._timed(self.inner.read, statement)

    async def write(self, statement: Statement) -> list[Row]:
        return await self._timed(self.inner.write, statement)


@pytest.mark.parametrize("share", [0.25, 0.5])
async def test_a_paced_statement_leaves_the_engine_its_share_of_the_time(graph: GraphBackend, share: float) -> None:
    await graph.write(Statement("CREATE (:Existing)"))  # FalkorDB: a read of a graph not made yet finds nothing
    stopwatch = Stopwatch(graph)
    paced = PacedBackend(stopwatch, share)  # type: ignore[arg-type]
    expected = await graph.read(BUSY)
    assert expected == [{"n": 300000, "r": sum(range(1, 300001)) % 7}]
    started = time.monotonic()
    for _ in range(3):
        assert await paced.read(BUSY) == expected
    await paced.write(Statement("CREATE (:Paced) WITH 1 AS one UNWIND range(1, 100000) AS x RETURN count(x) AS n"))
    elapsed = time.monotonic() - started
    # The statements took `spent`; their pauses at least (1 - share) / share of it: a loaded machine only adds.
    assert elapsed >= stopwatch.spent / share * 0.95, (elapsed, stopwatch.spent)


async def test_an_engine_error_passes_through_unpaced(graph: GraphBackend) -> None:
    await graph.write(Statement("CREATE (:Existing)"))
    stopwatch = Stopwatch(graph)
    paced = PacedBackend(stopwatch, 0.01)  # a pause 99 times a statement's time, were it taken
    started = time.monotonic()
    with pytest.raises(BackendError):  # refused by the engine after its work: a type mismatch
        await paced.read(Statement("UNWIND range(1, 300000) AS x WITH count(x) AS n RETURN n + {a: 1} AS r"))
    elapsed = time.monotonic() - started
    assert elapsed < stopwatch.spent * 10 + 0.05, (elapsed, stopwatch.spent)  # paced, it would be 100 times


@pytest.mark.parametrize("share", [0, -0.5, 1.5])
def test_a_share_outside_zero_to_one_is_refused(share: float) -> None:
    with pytest.raises(ValueError, match="a share of the engine's time"):
        PacedBackend(None, share)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="stats_share"):
        Settings(stats_share=share)

"""The first walk of a graph written before the writes kept statistics (services/stat_counts.initialise): every
node of a registered label and its relationships of a registered type made due, a page at a time, over as soon as
a page comes back short. It waited for an empty page, so on a graph being written to it chased the writes for as
long as they went on: on a fresh folder under a steady `write_node` load, 1.49 engine statements a write (two
more write statements every four writes), where 1.0 is the write's own."""

import anyio
import pytest

from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.services import stat_counts
from write_gate.services.stat_counts import MARK_PAGE
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import Settings

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]


async def grown(graph: GraphBackend, people: int) -> None:
    """`people` :Person nodes and a KNOWS from each to the next, written as an old gate did: nothing due."""
    await graph.write(
        Statement("UNWIND range(1, $n) AS i CREATE (:Person {_key: toString(i), name: toString(i)})", {"n": people})
    )
    await graph.write(
        Statement(
            "MATCH (a:Person), (b:Person) WHERE toInteger(b._key) = toInteger(a._key) + 1 CREATE (a)-[:KNOWS]->(b)"
        )
    )


async def due(graph: GraphBackend) -> tuple[int, int]:
    [nodes] = await graph.read(Statement("MATCH (n:Person) WHERE n._due = 1 RETURN count(n) AS n"))
    [rels] = await graph.read(Statement("MATCH ()-[r:KNOWS]->() WHERE r._due = 1 RETURN count(r) AS n"))
    return nodes["n"], rels["n"]


async def test_a_page_short_of_the_limit_ends_the_walk(graph: GraphBackend) -> None:
    await grown(graph, 10)
    assert await stat_counts.initialise(graph, ["Person"], ["KNOWS"], pages=1)  # one page, and over
    assert await due(graph) == (10, 9)
    assert await stat_counts.initialise(graph, ["Person"], ["KNOWS"], pages=0)  # over, and remembered


async def test_a_graph_of_more_than_a_page_is_walked_a_page_at_a_time(graph: GraphBackend) -> None:
    people = MARK_PAGE + MARK_PAGE // 4
    await grown(graph, people)
    assert not await stat_counts.initialise(graph, ["Person"], ["KNOWS"], pages=1)  # a full page: more may follow
    assert await due(graph) < (people, people - 1)
    assert await stat_counts.initialise(graph, ["Person"], ["KNOWS"], pages=1)  # the rest, short: over
    assert await due(graph) == (people, people - 1)


async def test_the_walk_ends_while_writes_go_on(graph: GraphBackend, settings: Settings) -> None:
    """Another connection creates nodes as fast as the engine takes them (each marked due, as a gate's write marks
    it) while the walk runs: the walk is over in a few pages, not when the writes stop, and every node is due."""
    await grown(graph, 10)
    writer = await open_backend(settings)
    walked = anyio.Event()
    made = 0

    async def write() -> None:
        nonlocal made
        while not walked.is_set():
            await writer.write(Statement("CREATE (:Person {_key: $k, name: $k, _due: 1})", {"k": f"w{made}"}))
            made += 1

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(write)
            await anyio.sleep(0.05)  # the writes under way
            with anyio.fail_after(20):
                assert await stat_counts.initialise(graph, ["Person"], ["KNOWS"])
            walked.set()
    finally:
        await writer.close()
    assert made > 0
    [row] = await graph.read(Statement("MATCH (n:Person) RETURN count(n) AS all, sum(n._due) AS due"))
    assert row["all"] == row["due"] == 10 + made

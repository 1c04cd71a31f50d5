"""engines/falkordb_reply parses FalkorDB's compact reply as the client's own parser does (then `plain`), for every
value type the engine answers, and hands a reply with nodes, relationships or paths to the client's parser; a large
reply is parsed in a worker thread, off the event loop."""

import threading

import pytest
from falkordb.asyncio.query_result import QueryResult

from write_gate.core.cypher.statement import Statement
from write_gate.engines import falkordb_reply
from write_gate.engines.base import plain
from write_gate.engines.falkordb import FalkorDBBackend
from write_gate.engines.falkordb_reply import HEAVY_ROWS, NeedsSchema, parse
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import Settings

pytestmark = pytest.mark.anyio

EVERY_VALUE = (
    "RETURN 'tëxt' AS s, 42 AS i, -7 AS neg, null AS nothing, 2.5 AS d, true AS t, false AS f, "
    "[1, 'two', [3.0, null], {k: 'v'}] AS array, {a: 1, b: {c: [true]}, e: null} AS map, "
    "point({latitude: 1.5, longitude: -2.25}) AS p, vecf32([0.5, 1.0]) AS v, [] AS empty, {} AS nomap"
)


async def raw(backend: FalkorDBBackend, text: str) -> list:
    _db, graph = await backend._connected()  # noqa: SLF001 - the engine's own reply, as the backend receives it
    return await graph.execute_command("GRAPH.QUERY", graph.name, text, "--compact")


async def by_client(backend: FalkorDBBackend, response: list) -> list[dict]:
    _db, graph = await backend._connected()  # noqa: SLF001
    result = QueryResult(graph)
    await result.parse(response)
    names = [column[1] for column in result.header]
    return [dict(zip(names, (plain(v) for v in row), strict=True)) for row in result.result_set]


async def test_every_value_type_parses_as_the_clients_parser_does(settings: Settings) -> None:
    backend = await open_backend(settings)
    try:
        await backend.write(Statement("CREATE (:Seed)"))
        response = await raw(backend, EVERY_VALUE)
        mine = parse(response).rows
        assert mine == await by_client(backend, response)
        assert mine[0]["s"] == "tëxt" and mine[0]["map"] == {"a": 1, "b": {"c": [True]}, "e": None}
        assert await backend.read(Statement(EVERY_VALUE)) == mine  # and the backend answers it so
    finally:
        await backend.close()


async def test_nodes_and_relationships_go_to_the_clients_parser(settings: Settings) -> None:
    backend = await open_backend(settings)
    try:
        await backend.write(Statement("CREATE (:A {name: 'a'})-[:R {w: 1}]->(:B {name: 'b'})"))
        text = "MATCH p = (a:A)-[r:R]->(b) RETURN a, r, p, a.name AS name"
        with pytest.raises(NeedsSchema):
            parse(await raw(backend, text))
        [row] = await backend.read(Statement(text))
        assert row["a"] == {"name": "a"} and row["r"] == {"w": 1} and row["name"] == "a"
        created = await backend.write(Statement("CREATE (n:C {x: 1}) RETURN n"))  # a write's count still kept
        assert created == [{"n": {"x": 1}}]
    finally:
        await backend.close()


async def test_a_large_reply_is_parsed_off_the_event_loop(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[tuple[int, bool]] = []

    def watched(response: list) -> falkordb_reply.Reply:
        reply = parse(response)
        threads.append((len(reply.rows), threading.current_thread() is threading.main_thread()))
        return reply

    monkeypatch.setattr(falkordb_reply, "parse", watched)
    backend = await open_backend(settings)
    try:
        await backend.write(Statement("UNWIND range(1, $n) AS i CREATE (:Row {i: i})", {"n": HEAVY_ROWS}))
        small = await backend.read(Statement("MATCH (r:Row) RETURN r.i AS i ORDER BY i LIMIT 5"))
        large = await backend.read(Statement("MATCH (r:Row) RETURN r.i AS i ORDER BY i"))
    finally:
        await backend.close()
    assert [row["i"] for row in small] == [1, 2, 3, 4, 5]
    assert [row["i"] for row in large] == list(range(1, HEAVY_ROWS + 1))
    assert (5, True) in threads and (HEAVY_ROWS, False) in threads


async def test_doubles_read_back_as_the_engine_answers_them_and_the_largest_stay_finite(settings: Settings) -> None:
    """FalkorDB answers a double in 15 significant digits: 0.30000000000000004 reads 0.3 (the engine holds and
    compares the exact value), and the largest doubles, which that rounds past the largest, read as it."""
    backend = await open_backend(settings)
    try:
        params = {"tiny": 0.30000000000000004, "top": 1.7976931348623157e308, "bottom": -1.7976931348623157e308}
        await backend.write(Statement("CREATE (:D {tiny: $tiny, top: $top, bottom: $bottom})", params))
        text = "MATCH (d:D) RETURN d.tiny AS tiny, d.top AS top, d.bottom AS bottom, d.tiny = $tiny AS exact"
        [row] = await backend.read(Statement(text, {"tiny": 0.30000000000000004}))
        assert row == {"tiny": 0.3, "top": 1.7976931348623157e308, "bottom": -1.7976931348623157e308, "exact": True}
    finally:
        await backend.close()

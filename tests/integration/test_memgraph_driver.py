"""The Memgraph backend through the real neo4j driver, against the Bolt double (tests/bolt_double) in front of a real
FalkorDB: managed transactions with BEGIN's tx_timeout, the summary type guarding reads, auto-commit DDL, URL
schemes and credentials, and every fault path (conflict, unique violation at commit, timeout, frozen server,
dropped connection, unreachable engine) run for real. Memgraph's own semantics are the testcontainers tier's."""

import asyncio
import re
import socket
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Iterator
from pathlib import Path

import anyio
import neo4j
import pytest
from mcp import Client, StdioServerParameters
from pydantic import SecretStr

from tests.bolt_double import Action, BoltDouble
from tests.conftest import (
    COMPOSITE_SCHEMAS,
    MATRIX_SCHEMAS,
    settings_env,
    start_falkordb_server,
    stop_server,
    write_gate_argv,
)
from tests.unit.test_golden import FRAGMENTS, READS, RUN_TIME_PARAMETERS, built, shapes
from write_gate.core.cypher.dialect import MemgraphDialect
from write_gate.core.cypher.statement import Statement
from write_gate.engines import (
    BackendError,
    BackendUnavailable,
    ConstraintViolation,
    QueryTimeout,
    StorageUnavailable,
)
from write_gate.engines.memgraph import MemgraphBackend
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import BackendKind, Settings
from write_gate.store.schema_files import load_into_graph, read_sources
from write_gate.surface.server import build_server

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def falkordb_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    process, url = start_falkordb_server(tmp_path_factory.mktemp("falkordb_behind_bolt"))
    yield url
    stop_server(process)


@pytest.fixture
async def double(falkordb_url: str) -> AsyncIterator[BoltDouble]:
    server = BoltDouble(falkordb_url)
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def backend(double: BoltDouble) -> AsyncIterator[MemgraphBackend]:
    opened = MemgraphBackend(double.url(), "", "", f"t_{uuid.uuid4().hex[:12]}", 5)
    yield opened
    await opened.close()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def count(backend: MemgraphBackend, label: str) -> int:
    return (await backend.read(Statement(f"MATCH (n:{label}) RETURN count(n) AS c")))[0]["c"]


# --- the driver path -----------------------------------------------------------------------------


async def test_each_statement_is_one_managed_transaction_with_its_timeout_in_begin(double: BoltDouble) -> None:
    backend = MemgraphBackend(double.url(), "", "", "tx_shape", 7)
    try:
        rows = await backend.write(Statement("CREATE (n:Probe {s: $s}) RETURN n.s AS s", {"s": "ünï"}))
        assert rows == [{"s": "ünï"}]
        assert await backend.read(Statement("MATCH (n:Probe) RETURN n.s AS s")) == [{"s": "ünï"}]
    finally:
        await backend.close()
    write, read = double.begins[-2:]
    assert write == {"db": "tx_shape", "tx_timeout": 7000}
    assert read == {"db": "tx_shape", "tx_timeout": 7000, "mode": "r"}
    assert double.messages[:2] == ["HELLO", "LOGON"]
    assert double.messages.count("COMMIT") == 2 and "ROLLBACK" not in double.messages


async def test_nodes_relationships_and_paths_come_back_as_property_maps(backend: MemgraphBackend) -> None:
    await backend.write(Statement("CREATE (:A {x: 1, l: [1.5, 2.5]})-[:R {w: 0.5}]->(:B {ok: true})"))
    rows = await backend.read(Statement("MATCH p = (a:A)-[r]->(b) RETURN a, r, b, p, properties(a) AS pa"))
    assert rows[0]["a"] == {"x": 1, "l": [1.5, 2.5]} and rows[0]["r"] == {"w": 0.5} and rows[0]["b"] == {"ok": True}
    assert rows[0]["pa"] == rows[0]["a"]
    assert isinstance(rows[0]["p"], neo4j.graph.Path) and [n["x"] for n in rows[0]["p"].nodes if "x" in n] == [1]


async def test_a_result_larger_than_one_pull_comes_in_several(double: BoltDouble, backend: MemgraphBackend) -> None:
    rows = await backend.read(Statement("UNWIND range(1, 2500) AS i RETURN i"))
    assert [row["i"] for row in rows] == list(range(1, 2501))
    assert double.messages.count("PULL") >= 3  # the driver fetches 1,000 records a PULL; has_more asks for more


async def test_a_write_in_a_read_is_refused_by_the_summary_type_and_rolled_back(
    double: BoltDouble, backend: MemgraphBackend
) -> None:
    before = len(double.messages)
    with pytest.raises(BackendError, match="type 'w'"):
        await backend.read(Statement("CREATE (n:Sneaky) RETURN n"))
    sent = double.messages[before:]
    assert "ROLLBACK" in sent and "COMMIT" not in sent
    assert await count(backend, "Sneaky") == 0


async def test_a_plain_delete_of_a_connected_node_is_refused_as_memgraph_refuses_it(backend: MemgraphBackend) -> None:
    """FalkorDB would drop the relationships of a node a plain DELETE removes; Memgraph refuses it, and so does
    the double, before running anything. DETACH DELETE, a node without relationships and a relationship pass."""
    await backend.write(Statement("CREATE (:P {name: 'a'})-[:R]->(:P {name: 'b'}), (:P {name: 'c'})"))
    for text in ("MATCH (n:P {name: 'a'}) DELETE n", "MATCH (n:P) WHERE n.name = 'b'\nWITH n\nDELETE n"):
        with pytest.raises(BackendError, match="existing connections. Consider using DETACH DELETE"):
            await backend.write(Statement(text))
    # Refused unrun: nothing was deleted.
    assert await count(backend, "P") == 3
    assert await backend.read(Statement("MATCH ()-[r]->() RETURN count(r) AS c")) == [{"c": 1}]
    await backend.write(Statement("MATCH (n:P {name: 'c'}) DELETE n"))
    await backend.write(Statement("MATCH (:P)-[r:R]->() DELETE r"))
    await backend.write(Statement("MATCH (n:P {name: 'a'}) DELETE n"))  # no relationships left
    await backend.write(Statement("CREATE (:P {name: 'd'})-[:R]->(:P {name: 'e'})"))
    await backend.write(Statement("MATCH (n:P {name: 'd'}) DETACH DELETE n"))
    assert [r["n"] for r in await backend.read(Statement("MATCH (n:P) RETURN n.name AS n ORDER BY n"))] == ["b", "e"]


async def test_ddl_runs_auto_commit_and_repeating_it_is_a_notification(
    double: BoltDouble, backend: MemgraphBackend
) -> None:
    begins = len(double.begins)
    for _ in range(2):
        await backend.ensure_unique("Person", "name")
        await backend.ensure_index("Person", "born")
    assert len(double.begins) == begins  # no explicit transaction: Memgraph refuses DDL in one
    constraints = await backend.read(Statement("SHOW CONSTRAINT INFO"))
    assert constraints == [{"constraint type": "unique", "label": "Person", "properties": ["name"]}]
    indexed = await backend.write(Statement("CALL db.indexes() YIELD label, properties RETURN label, properties"))
    assert indexed == [{"label": "Person", "properties": ["name", "born"]}]


async def test_memgraph_composite_unique_constraint(backend: MemgraphBackend) -> None:
    ddl = MemgraphDialect().create_unique_constraint("Person", "name", "born")
    assert ddl == "CREATE CONSTRAINT ON (n:`Person`) ASSERT n.`name`, n.`born` IS UNIQUE"
    await backend._ddl(ddl)
    constraints = await backend.read(Statement("SHOW CONSTRAINT INFO"))
    assert constraints == [{"constraint type": "unique", "label": "Person", "properties": ["name", "born"]}]


async def test_a_schema_load_constrains_each_labels_key_composite_merge_keys_included(
    double: BoltDouble, backend: MemgraphBackend
) -> None:
    """City is identified by name and country: its identity is the one `_key` text of both, so the constraint Memgraph
    needs is on `_key` alone (and an index, which Memgraph's constraint does not bring)."""
    await load_into_graph(backend, read_sources([COMPOSITE_SCHEMAS]))
    ddl = set(double.engine.ddl)
    for label in ("Person", "City"):
        assert f"CREATE CONSTRAINT ON (n:`{label}`) ASSERT n.`_key` IS UNIQUE" in ddl
        assert f"CREATE INDEX ON :`{label}`(`_key`)" in ddl
    constraints = await backend.read(Statement("SHOW CONSTRAINT INFO"))
    assert {"constraint type": "unique", "label": "City", "properties": ["_key"]} in constraints
    assert not any(row["label"] == "City" and row["properties"] != ["_key"] for row in constraints)


# --- faults ----------------------------------------------------------------------------------------


async def test_a_transient_conflict_is_retried_by_the_managed_transaction(
    double: BoltDouble, backend: MemgraphBackend
) -> None:
    double.faults.arm(Action.TRANSIENT, match="MERGE (n:Conflict")
    rows = await backend.write(Statement("MERGE (n:Conflict {name: 'a'}) RETURN n.name AS name"))
    assert rows == [{"name": "a"}]
    assert [action for action, _ in double.faults.fired] == [Action.TRANSIENT]
    assert await count(backend, "Conflict") == 1


async def test_a_write_is_retried_within_its_window_only(double: BoltDouble) -> None:
    """A write carries the stamp of when it was decided: the driver sends it again only within the write's retry
    window (core.change_feed.write_retry_seconds), from its first retry a few milliseconds on, so a retried write
    still commits where the change feed has not passed; conflicting past the window, it was never applied."""
    # A window shorter than the driver's own first backoff (1 s, jittered down to 0.8 s): with the driver's default
    # delays the first write would fail its second attempt past the window, and the second would be tried twice.
    backend = MemgraphBackend(double.url(), "", "", f"t_{uuid.uuid4().hex[:12]}", 5, write_retry_seconds=0.75)
    try:
        double.faults.arm(Action.TRANSIENT, match="MERGE (n:Quick", times=2)
        await backend.write(Statement("MERGE (n:Quick {name: 'a'})"))
        assert await count(backend, "Quick") == 1
        double.faults.clear()
        double.faults.arm(Action.TRANSIENT, match="MERGE (n:Late", times=1000)
        began = time.monotonic()
        with pytest.raises(BackendUnavailable, match="kept refusing conflicting transactions"):
            await backend.write(Statement("MERGE (n:Late {name: 'a'})"))
        assert time.monotonic() - began < 4.0  # the window, not the 5 s timeout the driver would use by default
        tries = sum("n:Late" in text for _, text in double.faults.fired)
        assert tries >= 3  # retried fast (20 ms, 40 ms, ...), not once a second
        assert await count(backend, "Late") == 0
    finally:
        double.faults.clear()
        await backend.close()


async def test_a_unique_violation_at_commit_is_retried_once_and_then_matches(
    double: BoltDouble, backend: MemgraphBackend
) -> None:
    await backend.write(Statement("MERGE (:Person {name: 'Ada'})"))  # the winner of the race
    double.faults.arm(Action.UNIQUE_VIOLATION, match="MERGE (n:Person")
    rows = await backend.write(Statement("MERGE (n:Person {name: 'Ada'}) RETURN n.name AS name"))
    assert rows == [{"name": "Ada"}]
    assert await count(backend, "Person") == 1

    double.faults.arm(Action.UNIQUE_VIOLATION, match="MERGE (n:Person", times=2)
    with pytest.raises(ConstraintViolation, match=r"unique constraint violation on :Person\(name\)"):
        await backend.write(Statement("MERGE (n:Person {name: 'Grace'}) RETURN n.name AS name"))
    assert await count(backend, "Person") == 1  # the loser was rolled back both times


async def test_memgraph_at_its_memory_limit_is_storage_unavailable_and_not_retried(
    double: BoltDouble, backend: MemgraphBackend
) -> None:
    double.faults.arm(Action.OUT_OF_MEMORY, match="CREATE (n:Big", times=5)
    with pytest.raises(StorageUnavailable, match="Memory limit exceeded"):
        await backend.write(Statement("CREATE (n:Big) RETURN n"))
    assert len(double.faults.fired) == 1  # retrying a write that does not fit only fails again
    assert await count(backend, "Big") == 0


async def test_memgraph_aborting_a_slow_statement_is_a_timeout_and_not_retried(
    double: BoltDouble, falkordb_url: str
) -> None:
    backend = MemgraphBackend(double.url(), "", "", f"t_{uuid.uuid4().hex[:12]}", 1)
    try:
        double.faults.arm(Action.DELAY, match="CREATE (n:Slow", seconds=3, times=5)
        with pytest.raises(BackendUnavailable, match="did not answer within 1 s"):
            await backend.write(Statement("CREATE (n:Slow) RETURN n"))
        assert len(double.faults.fired) == 1  # the driver would have retried Memgraph's TransientError
        assert await count(backend, "Slow") == 0
    finally:
        await backend.close()


async def test_a_read_past_its_limit_is_aborted_by_the_server_as_a_query_timeout(double: BoltDouble) -> None:
    backend = MemgraphBackend(double.url(), "", "", f"t_{uuid.uuid4().hex[:12]}", 5, read_timeout_seconds=0.2)
    try:
        double.faults.arm(Action.DELAY, match="MATCH (n:Slow", seconds=3, times=5)
        with pytest.raises(QueryTimeout) as stopped:
            await backend.read(Statement("MATCH (n:Slow) RETURN n"))
        assert stopped.value.limit_seconds == 0.2
        assert double.begins[-1]["tx_timeout"] == 200  # the read's own limit, which the server enforces
        assert len(double.faults.fired) == 1  # a read that ran out of time once is not sent again
        assert await backend.read(Statement("RETURN 1 AS one")) == [{"one": 1}]
    finally:
        await backend.close()


async def test_a_frozen_server_ends_at_the_clients_own_deadline(double: BoltDouble) -> None:
    backend = MemgraphBackend(double.url(), "", "", "frozen", 1)
    try:
        double.faults.arm(Action.FREEZE, match="MATCH (n:Frozen)")
        with pytest.raises(BackendUnavailable, match="did not answer within 3 s"):
            await backend.read(Statement("MATCH (n:Frozen) RETURN n"))
    finally:
        await backend.close()


async def test_a_dropped_connection_is_retried_on_a_new_one(double: BoltDouble, backend: MemgraphBackend) -> None:
    await backend.ping()
    double.faults.arm(Action.DROP, match="MERGE (n:Dropped")
    rows = await backend.write(Statement("MERGE (n:Dropped {name: 'x'}) RETURN n.name AS name"))
    assert rows == [{"name": "x"}]
    assert [action for action, _ in double.faults.fired] == [Action.DROP]
    assert await count(backend, "Dropped") == 1


async def test_connections_dropped_between_statements_are_replaced(
    double: BoltDouble, backend: MemgraphBackend
) -> None:
    await backend.write(Statement("CREATE (:Before)"))
    await double.drop_connections()
    await backend.write(Statement("CREATE (:After)"))
    assert await count(backend, "Before") == 1 and await count(backend, "After") == 1


async def test_an_unreachable_engine_is_backend_unavailable_for_every_operation() -> None:
    backend = MemgraphBackend(f"bolt://127.0.0.1:{closed_port()}", "", "", "", 2)

    async def outcome(attempt: Awaitable[object]) -> str:
        try:
            await attempt
        except BackendUnavailable as exc:
            return str(exc)
        return "answered"

    try:
        outcomes = await asyncio.gather(
            outcome(backend.ping()),
            outcome(backend.read(Statement("MATCH (n) RETURN n"))),
            outcome(backend.write(Statement("CREATE (n)"))),
            outcome(backend.ensure_index("Person", "name")),
            outcome(backend.ensure_unique("Person", "name")),
        )
    finally:
        await backend.close()
    # The driver retries a refused connection for its retry window, then gives up: before the backstop deadline.
    assert outcomes == ["Memgraph unreachable: ServiceUnavailable"] * 5


async def test_an_engine_that_goes_away_is_backend_unavailable(falkordb_url: str) -> None:
    server = BoltDouble(falkordb_url)
    await server.start()
    backend = MemgraphBackend(server.url(), "", "", "gone", 1)
    try:
        await backend.write(Statement("CREATE (:Here)"))
        await server.stop()
        with pytest.raises(BackendUnavailable):
            await backend.read(Statement("MATCH (n) RETURN n"))
    finally:
        await backend.close()


# --- credentials and URLs ------------------------------------------------------------------------


async def test_credentials_come_from_memgraph_user_and_password(
    falkordb_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = BoltDouble(falkordb_url, user="gate", password="s3cret")
    await server.start()
    try:
        monkeypatch.setenv("MEMGRAPH_URL", server.url())
        monkeypatch.setenv("MEMGRAPH_USER", "gate")
        monkeypatch.setenv("MEMGRAPH_PASSWORD", "s3cret")
        monkeypatch.setenv("MEMGRAPH_DATABASE", "with_auth")
        settings = Settings(backend=BackendKind.MEMGRAPH)
        backend = await open_backend(settings)
        try:
            await backend.write(Statement("CREATE (:Authenticated)"))
            assert await backend.read(Statement("MATCH (n:Authenticated) RETURN count(n) AS c")) == [{"c": 1}]
        finally:
            await backend.close()

        wrong = await open_backend(settings.model_copy(update={"memgraph_password": SecretStr("guess")}))
        try:
            for attempt in (
                wrong.ping,
                lambda: wrong.read(Statement("RETURN 1 AS one")),
                lambda: wrong.ensure_index("A", "b"),
            ):
                with pytest.raises(BackendUnavailable, match="refused the credentials"):
                    await attempt()
        finally:
            await wrong.close()
    finally:
        await server.stop()


@pytest.mark.parametrize(
    ("scheme", "driver_class", "encrypted"),
    [
        ("bolt", neo4j.AsyncBoltDriver, False),
        ("bolt+s", neo4j.AsyncBoltDriver, True),
        ("bolt+ssc", neo4j.AsyncBoltDriver, True),
        ("neo4j", neo4j.AsyncNeo4jDriver, False),
        ("neo4j+s", neo4j.AsyncNeo4jDriver, True),
        ("neo4j+ssc", neo4j.AsyncNeo4jDriver, True),
    ],
)
async def test_every_url_scheme_reaches_the_driver_unchanged(
    scheme: str, driver_class: type, encrypted: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMGRAPH_URL", f"{scheme}://db.example:7688")
    settings = Settings(backend=BackendKind.MEMGRAPH)
    assert settings.memgraph_url == f"{scheme}://db.example:7688"
    backend = await open_backend(settings)
    try:
        driver = backend._driver  # type: ignore[attr-defined]
        assert type(driver) is driver_class and driver.encrypted is encrypted
        assert str(driver._pool.address) == "db.example:7688"
    finally:
        await backend.close()


async def test_a_routing_url_asks_for_a_routing_table_then_runs_there(double: BoltDouble) -> None:
    backend = MemgraphBackend(double.url("neo4j"), "", "", "routed", 5)
    try:
        await backend.write(Statement("CREATE (:Routed)"))
        assert await count(backend, "Routed") == 1
    finally:
        await backend.close()
    assert "ROUTE" in double.messages


@pytest.fixture
async def tls_double(falkordb_url: str, tmp_path: Path) -> AsyncIterator[BoltDouble]:
    pytest.importorskip("cryptography", reason="the TLS double needs cryptography (installed with mcp's pyjwt)")
    from tests.bolt_double.tls import self_signed_context

    server = BoltDouble(falkordb_url, tls=self_signed_context(tmp_path))
    await server.start()
    yield server
    await server.stop()


@pytest.mark.parametrize("scheme", ["bolt+ssc", "neo4j+ssc"])
async def test_tls_with_a_self_signed_certificate_is_accepted_by_ssc(tls_double: BoltDouble, scheme: str) -> None:
    backend = MemgraphBackend(tls_double.url(scheme), "", "", f"tls_{scheme.replace('+', '_')}", 5)
    try:
        await backend.write(Statement("CREATE (:OverTls)"))
        assert await count(backend, "OverTls") == 1
    finally:
        await backend.close()


async def test_tls_with_an_untrusted_certificate_is_backend_unavailable(tls_double: BoltDouble) -> None:
    backend = MemgraphBackend(tls_double.url("bolt+s"), "", "", "tls_verified", 1)
    try:
        with pytest.raises(BackendUnavailable):
            await backend.write(Statement("CREATE (:Never)"))
    finally:
        await backend.close()
    assert "RUN" not in tls_double.messages


# --- through the command line and MCP -------------------------------------------------------------


async def test_migrate_then_serve_on_memgraph_as_a_user_would(double: BoltDouble) -> None:
    settings = Settings(
        backend=BackendKind.MEMGRAPH, memgraph_url=double.url(), memgraph_database=f"t_{uuid.uuid4().hex[:12]}"
    )
    first = await anyio.run_process(write_gate_argv("migrate"), env=settings_env(settings), check=False)
    assert first.returncode == 0, first.stderr.decode()
    assert b"0001_registry_indexes" in first.stdout and b"0002_core_registry" in first.stdout
    second = await anyio.run_process(write_gate_argv("migrate"), env=settings_env(settings), check=False)
    assert second.returncode == 0 and b"up to date" in second.stdout

    command, *args = write_gate_argv("serve", "--no-migrate")
    params = StdioServerParameters(command=command, args=args, env=settings_env(settings))
    async with Client(params, read_timeout_seconds=60) as client:
        result = await client.call_tool(
            "write_node",
            {"label": "User", "merge_keys": {"name": "Ada"}, "source": "readme", "extraction_method": "manual"},
        )
    assert not result.is_error and result.structured_content["remapped_from"] == ":User"
    backend = await open_backend(settings)
    try:
        assert await backend.read(Statement("MATCH (n:Person {name: 'Ada'}) RETURN n.source AS s")) == [{"s": "readme"}]
    finally:
        await backend.close()


async def test_a_tool_call_rides_out_a_conflict_and_a_lost_race(double: BoltDouble) -> None:
    settings = Settings(
        backend=BackendKind.MEMGRAPH, memgraph_url=double.url(), memgraph_database=f"t_{uuid.uuid4().hex[:12]}"
    )
    backend = await open_backend(settings)
    try:
        await load_into_graph(backend, read_sources([MATRIX_SCHEMAS]))
    finally:
        await backend.close()
    double.faults.arm(Action.TRANSIENT, match="MERGE (n:`Person`")
    double.faults.arm(Action.UNIQUE_VIOLATION, match="MERGE (n:`Person`")
    args = {"label": "Person", "merge_keys": {"name": "Ada"}, "source": "notes", "extraction_method": "manual"}
    async with Client(build_server(settings, auto_migrate=False)) as client:
        result = await client.call_tool("write_node", args)
    assert not result.is_error and result.structured_content["status"] == "written"
    assert sorted(action for action, _ in double.faults.fired) == [Action.TRANSIENT, Action.UNIQUE_VIOLATION]


VALUES = [
    None,
    True,
    False,
    *[0, -1, -16, -17, 127, 128, -128, -129, 32767, 32768, -32769, 2**31, -(2**31) - 1, 2**63 - 1, -(2**63) + 1],
    0.5,
    -1.0e300,
    *["", "x" * 15, "x" * 16, "é" * 200, "y" * 70_000],  # tiny, 8-bit, 16-bit and 32-bit sizes; several chunks
    list(range(16)),
    ["a", 1, 2.5, None, [True]],
    {f"k{i}": i for i in range(16)},
    {"nested": {"list": [1, "two"], "none": None}},
]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__ + str(len(str(v))))
async def test_every_value_type_goes_there_and_back(backend: MemgraphBackend, value: object) -> None:
    assert await backend.read(Statement("RETURN $v AS v", {"v": value})) == [{"v": value}]


async def test_batch_and_remapped_relationship_shapes_run_on_memgraph(double: BoltDouble) -> None:
    """Shapes the suite's engine-parametrised tests leave out on Memgraph: batch relationships with merged
    endpoints, and a relationship written under a remapped type (merging its endpoints, and matching them)."""
    settings = Settings(
        backend=BackendKind.MEMGRAPH, memgraph_url=double.url(), memgraph_database=f"t_{uuid.uuid4().hex[:12]}"
    )
    backend = await open_backend(settings)
    try:
        await load_into_graph(backend, read_sources([MATRIX_SCHEMAS]))
    finally:
        await backend.close()
    given = {"source": "batch", "extraction_method": "api"}
    works_for = {"from_label": "Person", "to_label": "Organization", **given}
    items = [
        {"type": "WORKS_FOR", "from_keys": {"name": "Ada"}, "to_keys": {"name": "Acme"}, "weight": 0.5, **works_for},
        {"type": "WORKS_FOR", "from_keys": {"name": "Bob"}, "to_keys": {"name": "Acme"}, **works_for},
    ]
    for item in items:
        item["endpoint_policy"] = "merge_endpoints"
    remapped = {"type": "EMPLOYED_BY", "from_keys": {"name": "Cy"}, "to_keys": {"name": "Acme"}, **works_for}
    async with Client(build_server(settings, auto_migrate=False)) as client:
        batch = (await client.call_tool("write_relationships", {"items": items})).structured_content
        single = await client.call_tool("write_relationship", {**remapped, "endpoint_policy": "merge_endpoints"})
        matched = await client.call_tool("write_relationship", {**remapped, "from_keys": {"name": "Ada"}})
    assert (batch["written"], batch["rejected"]) == (2, 0)
    assert not matched.is_error and matched.structured_content["remapped_from"] == ":EMPLOYED_BY"
    assert [item["stub_endpoints"] for item in batch["items"]] == [["from", "to"]] * 2  # Acme stays a stub
    assert not single.is_error and single.structured_content["remapped_from"] == ":EMPLOYED_BY"
    backend = await open_backend(settings)
    try:
        rows = await backend.read(
            Statement("MATCH (a)-[r:WORKS_FOR]->(:Organization) RETURN a.name AS a, r.weight AS w ORDER BY a")
        )
    finally:
        await backend.close()
    assert rows == [{"a": "Ada", "w": 0.5}, {"a": "Bob", "w": 1.0}, {"a": "Cy", "w": 1.0}]


GOLDEN_SHAPES = sorted(set(shapes("memgraph")) - FRAGMENTS)


@pytest.mark.parametrize("name", GOLDEN_SHAPES)
async def test_every_statement_shape_the_gate_emits_runs_through_the_bolt_tier(
    backend: MemgraphBackend, name: str
) -> None:
    """Each golden Memgraph statement (tests/golden/memgraph), with the golden test's parameters, through the real
    driver to FalkorDB: it parses and runs; the reads run in READ mode and are read queries. What it does to a
    real graph is the engine-parametrised tests' business; Memgraph's own semantics, the testcontainers tier's."""
    statement = built("memgraph", name)
    params = dict(statement.params)
    for missing in set(re.findall(r"\$(\w+)", statement.text)) - set(params):
        params[missing] = RUN_TIME_PARAMETERS[missing]  # what the reads and batches are given when they run
    if name.startswith(("read_text_search_indexed", "read_page_substring")):
        for label in ("Person", "Organization"):  # the text indexes it queries
            assert await backend.ensure_text_index(label)
    if name == "embedding_nearest_texts":
        await backend.write(built("memgraph", "embedding_index_0"))  # the vector index it queries
    run = backend.read if name in READS else backend.write
    await run(Statement(statement.text, params))


async def test_ranked_search_scans_where_memgraph_has_no_text_search(double: BoltDouble) -> None:
    """Memgraph before 3.6 without its text-search flag refuses text indexes and `text_search`: the schema load
    still succeeds (the index is logged as missing), the ranked search answers by a scan, saying so, and
    search_nodes by its scan."""
    settings = Settings(
        backend=BackendKind.MEMGRAPH, memgraph_url=double.url(), memgraph_database=f"t_{uuid.uuid4().hex[:12]}"
    )
    double.faults.arm(Action.NO_TEXT_SEARCH, match="TEXT INDEX", times=100)
    double.faults.arm(Action.NO_TEXT_SEARCH, match="text_search.", times=100)
    backend = await open_backend(settings)
    try:
        await load_into_graph(backend, read_sources([MATRIX_SCHEMAS]))
    finally:
        await backend.close()
    args = {"label": "Person", "merge_keys": {"name": "Ada"}, "source": "notes", "extraction_method": "manual"}
    async with Client(build_server(settings, auto_migrate=False)) as client:
        assert not (await client.call_tool("write_node", args)).is_error
        result = await client.call_tool("search_nodes_ranked", {"query": "ada"})
        substring = await client.call_tool("search_nodes", {"query": "ada"})  # no trigram index: scanned
    assert not substring.is_error and [e["name"] for e in substring.structured_content["entities"]] == ["Ada"]
    assert not result.is_error, result.structured_content
    answer = result.structured_content
    assert answer["searched_by"] == "scan" and [h["entity"]["name"] for h in answer["results"]] == ["Ada"]
    assert {action for action, _ in double.faults.fired} == {Action.NO_TEXT_SEARCH}
    assert any("text_search." in statement for _, statement in double.faults.fired)

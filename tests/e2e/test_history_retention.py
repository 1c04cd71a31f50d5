"""History retention (issue 12, item 4) on every engine tier: records older than WRITE_GATE_HISTORY_RETENTION_DAYS
go, at a served gate's start (then hourly) and with `write-gate history prune`; newer records and open conflicts
stay, whatever their age; retention 0 keeps every record; migration 0006 indexes what pruning and history reads
look records up by. The records are made here with a plain CREATE: they are plain nodes (core/history.py)."""

import logging
import re
import socket
from datetime import timedelta
from typing import Any

import anyio
import pytest

from tests.conftest import CommandRun, is_bolt_tier, ok, open_client, run_write_gate, settings_env
from write_gate.core.clock import as_utc_text, utc_now
from write_gate.core.cypher.statement import Statement
from write_gate.core.decay import parse_at
from write_gate.core.feed_windows import SEQ_NUMBER, seq_number
from write_gate.engines import GraphBackend
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import BackendKind, Settings
from write_gate.serving.history_keeper import keep_history_pruned, prune_once
from write_gate.store.history_pruning import prune_history
from write_gate.store.migrations import migrate

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

RETENTION_DAYS = 30.0


def days_ago(days: float) -> str:
    return as_utc_text(parse_at(utc_now()) - timedelta(days=days))


# Each record's name says what must become of it under a 30-day retention.
RECORDS: list[tuple[str, dict[str, Any]]] = [
    ("WriteGateChange", {"change_id": "gone-change", "at": days_ago(400), "key": "k", "op": "set"}),
    ("WriteGateChange", {"change_id": "gone-change-2", "at": days_ago(31), "key": "k", "op": "delete"}),
    ("WriteGateChange", {"change_id": "kept-change", "at": days_ago(29), "key": "k", "op": "set"}),
    # Stamped before the cutoff, ordered after a change stamped 29 days ago (clock skew): the prune reads the
    # window of the records' `seq` moments, so it goes once its `seq` is past the retention too.
    ("WriteGateChange", {"change_id": "kept-skewed", "at": days_ago(32), "seq": days_ago(29) + "#", "key": "k"}),
    # Hours old: kept by every prune here. Under the index on `at`, FalkorDB's scan ignored `at < $cutoff`.
    *[
        ("WriteGateChange", {"change_id": f"recent-{n}", "at": days_ago(n / 24), "key": "k", "op": "set"})
        for n in range(1, 9)
    ],
    ("WriteGateConflict", {"conflict_id": "gone-settled", "status": "settled", "at": days_ago(90)}),
    ("WriteGateConflict", {"conflict_id": "gone-resolved", "status": "resolved", "at": days_ago(90)}),
    ("WriteGateConflict", {"conflict_id": "kept-open", "status": "open", "at": days_ago(900)}),  # open: never
    ("WriteGateConflict", {"conflict_id": "kept-settled", "status": "settled", "at": days_ago(1)}),
]
RECENT = {f"recent-{n}" for n in range(1, 9)}
KEPT = {"kept-change", "kept-skewed", "kept-open", "kept-settled", *RECENT}
EVERY = {fields.get("change_id") or fields["conflict_id"] for _, fields in RECORDS}


async def create_records(graph: GraphBackend) -> None:
    await migrate(graph)  # as on a served graph: migration 0006's indexes in place, as pruning meets them
    for label, fields in RECORDS:  # with the order and number the gate gives them (core/cypher/change_order.py)
        seq = fields.get("seq", fields["at"]) if label == "WriteGateChange" else None
        numbered = fields | ({"seq": seq} if seq else {}) | {SEQ_NUMBER: seq_number(seq or fields["at"])}
        await graph.write(Statement(f"CREATE (r:{label}) SET r = $fields", {"fields": numbered}))
    # Not a record: an old `at` on anything else is none of pruning's business.
    await graph.write(Statement("CREATE (:Person {name: 'Old', at: $at})", {"at": days_ago(5000)}))


async def remaining(graph: GraphBackend) -> set[str]:
    rows = await graph.read(
        Statement(
            "MATCH (r) WHERE r:WriteGateChange OR r:WriteGateConflict RETURN coalesce(r.change_id, r.conflict_id) AS id"
        )
    )
    return {row["id"] for row in rows}


async def people(graph: GraphBackend) -> int:
    return (await graph.read(Statement("MATCH (p:Person) RETURN count(p) AS n")))[0]["n"]


def prune(settings: Settings, *args: str, retention: float = RETENTION_DAYS) -> CommandRun:
    """`write-gate history prune ARGS` under this retention, in process."""
    env = {**settings_env(settings), "WRITE_GATE_HISTORY_RETENTION_DAYS": str(retention)}
    return run_write_gate("history", "prune", *args, env=env)


async def test_a_served_gate_prunes_at_start(settings: Settings, graph: GraphBackend) -> None:
    await create_records(graph)
    served = settings.model_copy(update={"history_retention_days": RETENTION_DAYS})
    async with open_client(served, "in_process") as client:
        await ok(client, "get_schema", {})  # the server is up; its first prune runs beside it
        with anyio.fail_after(60):
            while await remaining(graph) != KEPT:
                await anyio.sleep(0.1)
    assert await people(graph) == 1


@pytest.mark.one_tier
async def test_the_cli_prunes_and_prints_how_many_records_went(settings: Settings, graph: GraphBackend) -> None:
    await create_records(graph)
    kept_all = prune(settings, retention=0)  # 0: keep every record
    assert kept_all.returncode == 0, kept_all.stderr
    assert "nothing pruned: WRITE_GATE_HISTORY_RETENTION_DAYS=0" in kept_all.stdout and await remaining(graph) == EVERY
    told = prune(settings, "--days", "0")  # the message names what said 0
    assert "nothing pruned: --days 0 keeps" in told.stdout and await remaining(graph) == EVERY

    first = prune(settings)
    assert first.returncode == 0, first.stderr
    assert "pruned 4 history records" in first.stdout and "2 changes, 2 settled or resolved conflicts" in first.stdout
    assert await remaining(graph) == KEPT and await people(graph) == 1
    again = prune(settings)
    assert again.returncode == 0 and "pruned 0 history records" in again.stdout

    closer = prune(settings, "--days", "0.5")  # --days overrides the setting: the day-old settled conflict goes
    assert "pruned 3 history records" in closer.stdout, closer.stdout  # and the 29-day-old changes
    assert await remaining(graph) == {"kept-open", *RECENT}


async def test_pruning_loops_over_chunks_until_one_comes_back_short(graph: GraphBackend) -> None:
    await create_records(graph)
    pruned = await prune_history(graph, days_ago(RETENTION_DAYS), chunk=1)  # one record per statement
    assert (pruned.changes, pruned.conflicts) == (2, 2)
    assert await remaining(graph) == KEPT


async def test_migration_0006_indexes_the_records_lookups(settings: Settings, graph: GraphBackend) -> None:
    assert "0006_history_indexes" in await migrate(graph)
    wanted = {
        ("WriteGateChange", "key"),
        ("WriteGateChange", "at"),
        ("WriteGateConflict", "status"),
        ("WriteGateConflict", "conflict_id"),
    }
    if settings.backend is BackendKind.MEMGRAPH and not is_bolt_tier(settings):
        rows = await graph.read(Statement("SHOW INDEX INFO"))
        found = {(row["label"], row["property"]) for row in rows}
    else:  # FalkorDB, itself or behind the Bolt double
        rows = await graph.read(Statement("CALL db.indexes() YIELD label, properties RETURN label, properties"))
        found = {(row["label"], prop) for row in rows for prop in row["properties"]}
    assert wanted <= found


async def test_the_served_loop_prunes_again_each_round_and_logs_what_went(
    graph: GraphBackend, caplog: pytest.LogCaptureFixture
) -> None:
    """The hourly loop, its hour made short: records written after its first round go at a later one."""
    caplog.set_level(logging.INFO, "write_gate.serving.history_keeper")
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(keep_history_pruned, graph, RETENTION_DAYS, 0.05)
        await anyio.sleep(0.2)  # a few rounds with nothing to do
        await create_records(graph)

        def logged() -> tuple[int, int]:
            rounds = re.findall(r"pruned (\d+) change records and (\d+) decided conflicts", caplog.text)
            return sum(int(c) for c, _ in rounds), sum(int(d) for _, d in rounds)

        # A round may fall between the records' creations and take them in two goes: what went adds up. The
        # records can be gone a moment before the round that took them says so: wait for both.
        with anyio.fail_after(60):
            while await remaining(graph) != KEPT or logged() != (2, 2):
                await anyio.sleep(0.05)
        tasks.cancel_scope.cancel()
    assert logged() == (2, 2)


async def test_retention_zero_keeps_the_loop_from_running(graph: GraphBackend) -> None:
    await create_records(graph)
    with anyio.fail_after(10):
        await keep_history_pruned(graph, None, 0.01)  # returns at once: nothing to keep pruned
    assert await prune_once(graph, 0) is None and await remaining(graph) == EVERY


async def test_a_prune_the_engine_cannot_run_is_logged_and_not_fatal(caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    away = await open_backend(
        Settings(backend=BackendKind.FALKORDB, falkordb_url=f"redis://127.0.0.1:{port}", query_timeout_seconds=2)
    )
    try:
        assert await prune_once(away, RETENTION_DAYS) is None
    finally:
        await away.close()
    assert "history not pruned" in caplog.text and "Traceback" not in caplog.text

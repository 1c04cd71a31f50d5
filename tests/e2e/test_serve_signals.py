"""A gate stopped by a signal leaves its embedded engine as a closed stdin does: the engine stops with the last
gate out, and what was written is there at the next start. Before, SIGTERM (how many clients stop a stdio
server, and how `uv run` passes a stop on) ended the gate at once and its engine ran on, unowned."""

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.http_process import http_gate
from tests.e2e.stdio_process import RawStdio
from tests.integration.test_embedded import engines_on
from write_gate.serving.config import BackendKind, Settings

WRITE = {
    "name": "write_node",
    "arguments": {"label": "Person", "merge_keys": {"name": "Ada"}, "source": "signals", "extraction_method": "manual"},
}


def settings_for(tmp_path: Path) -> Settings:
    return Settings(backend=BackendKind.EMBEDDED, data_dir=tmp_path / "data", embedded_fsync="everysec")


def wait_no_engine(folder: Path, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while engines_on(folder):
        assert time.monotonic() < deadline, f"the engine on {folder} still runs"
        time.sleep(0.1)


def read_back(settings: Settings) -> dict:
    server = RawStdio(settings)
    try:
        server.initialize()
        return server.request(1, "tools/call", {"name": "read_graph", "arguments": {}})["result"]
    finally:
        server.close()


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_stdio_gate_stopped_by_a_signal_stops_its_engine_and_keeps_its_writes(tmp_path: Path, number) -> None:
    settings = settings_for(tmp_path)
    log = tmp_path / "stderr.log"
    with log.open("wb") as stderr:
        server = RawStdio(settings, stderr=stderr)
        server.initialize()
        assert server.request(1, "tools/call", WRITE)["result"]["isError"] is False
        assert len(engines_on(settings.data_dir)) == 1
        server.process.send_signal(number)
        # Repeats all through the stop (as `uv run` forwards one, as a shell may send more) do not cut it short.
        deadline = time.monotonic() + 60
        while server.process.poll() is None:
            assert time.monotonic() < deadline, "the gate did not stop"
            server.process.send_signal(number)
            time.sleep(0.002)
        assert server.process.returncode == 0
    wait_no_engine(settings.data_dir)
    assert f"received {number.name}: stopping" in log.read_text()
    people = read_back(settings)["structuredContent"]["entities"]
    assert [(entity["entityType"], entity["name"]) for entity in people] == [("Person", "Ada")]
    wait_no_engine(settings.data_dir)


def test_an_http_gate_stopped_by_sigterm_stops_its_engine(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    with http_gate(settings, tmp_path / "stderr.log", "--no-auth") as gate:
        assert len(engines_on(settings.data_dir)) == 1
        gate.process.send_signal(signal.SIGTERM)
        # uvicorn shuts the application down (its lifespan leaves the engine), then re-raises the signal.
        assert gate.process.wait(timeout=60) in (0, -signal.SIGTERM)
    assert "Application shutdown complete." in (tmp_path / "stderr.log").read_text()
    wait_no_engine(settings.data_dir)


def test_the_engine_still_serves_the_gates_that_remain(tmp_path: Path) -> None:
    """Only the last gate out stops the engine: one gate stopped by a signal leaves it to the other."""
    settings = settings_for(tmp_path)
    first, second = RawStdio(settings), RawStdio(settings)
    try:
        first.initialize()
        second.initialize()
        first.process.send_signal(signal.SIGTERM)
        assert first.process.wait(timeout=60) == 0
        assert second.request(1, "tools/call", WRITE)["result"]["isError"] is False
        assert len(engines_on(settings.data_dir)) == 1
    finally:
        second.close()
        if first.process.poll() is None:
            first.process.kill()
    wait_no_engine(settings.data_dir)


# The gate's own watcher, alone in a process: it says when it listens, then serves until a signal stops it.
WATCHER = """
import anyio, sys
from write_gate.cli import _stop_on_signal

async def main():
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_stop_on_signal, tasks.cancel_scope)
        await anyio.sleep(0.2)
        print("listening", flush=True)
        await anyio.sleep(60)

anyio.run(main)
"""


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_flood_of_repeated_signals_never_finds_the_stop_under_the_default_action(number) -> None:
    """Repeats every 50 µs from the first on. The watcher once removed the loop's handlers (which restores the default
    action) before it ignored the signals: a repeat in between ended the process (CI; 38 of 40 here)."""
    for _ in range(6):
        watcher = subprocess.Popen([sys.executable, "-c", WATCHER], stdout=subprocess.PIPE)
        assert watcher.stdout is not None
        assert watcher.stdout.readline() == b"listening\n"
        deadline = time.monotonic() + 30
        while watcher.poll() is None:
            assert time.monotonic() < deadline, "the watcher did not stop"
            with contextlib.suppress(ProcessLookupError):
                os.kill(watcher.pid, number)
            time.sleep(0.00005)
        watcher.stdout.close()
        assert watcher.returncode == 0

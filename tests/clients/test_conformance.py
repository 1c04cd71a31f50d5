"""The MCP conformance suite (@modelcontextprotocol/conformance 0.1.13, the newest that runs on Node 20)
against `write-gate serve --transport http`. Every scenario that applies must pass; the ones that drive the
suite's own fixtures (tools, prompts and resources by fixed names) are listed, with why, in
conformance-baseline.yml, and the suite itself fails the run if one of those starts to pass."""

import subprocess
from pathlib import Path

import pytest

from tests.clients.conftest import _free_port, _wait_healthy, node_project
from tests.conftest import settings_env, write_gate_argv
from write_gate.config import BackendKind, Settings

pytestmark = pytest.mark.clients
BASELINE = Path(__file__).parent / "conformance-baseline.yml"


def test_conformance_suite_passes_every_scenario_that_applies(tmp_path: Path) -> None:
    project = node_project("node_conformance")
    settings = Settings(backend=BackendKind.EMBEDDED, data_dir=tmp_path / "data", embedded_fsync="everysec")
    port, log = _free_port(), tmp_path / "gate.log"
    env = settings_env(settings) | {"WRITE_GATE_PORT": str(port)}
    # The suite's client sends no bearer token: the server runs without an agents file (development mode).
    with log.open("wb") as log_file:
        server = subprocess.Popen(
            write_gate_argv("serve", "--transport", "http", "--no-auth"),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log_file,
        )
    try:
        _wait_healthy(f"http://127.0.0.1:{port}", server, log)
        cli = project / "node_modules" / ".bin" / "conformance"
        done = subprocess.run(
            [
                str(cli),
                "server",
                "--url",
                f"http://127.0.0.1:{port}/mcp",
                "--expected-failures",
                str(BASELINE),
                "-o",
                str(tmp_path / "results"),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=project,
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
    summary = done.stdout[done.stdout.find("=== SUMMARY ===") :]
    assert done.returncode == 0, summary + done.stderr[-2000:]
    for scenario in (
        "server-initialize",
        "logging-set-level",
        "ping",
        "tools-list",
        "resources-list",
        "server-sse-multiple-streams",
        "dns-rebinding-protection",
    ):
        assert f"✓ {scenario}:" in summary, summary

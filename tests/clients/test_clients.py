"""Clients we did not write drive the server over stdio and streamable HTTP, every profile: the Python SDK
(this repository's and the last 1.x) and the TypeScript SDK v1 and v2. Each lists the tools, checks every
input and output schema as JSON Schema, calls a success and a rejection of every tool kind (typed tools
of the rpg examples included), reads the schema resource and completes a label; the agent must receive
isError, error_code and text as scenario.py says, and every answer must match its tool's outputSchema.

Run alone with `uv run pytest -m clients` (about a minute once the clients are cached)."""

from pathlib import Path

import pytest

from tests.clients.conftest import Served, node_project, python_sdk_v1, run_driver
from tests.clients.driver_current import drive
from tests.clients.scenario import SCENARIOS, check_report

pytestmark = pytest.mark.clients

CLIENTS = ("python-sdk-current", "python-sdk-1.x", "ts-sdk-v1", "ts-sdk-v2")


# JSON answers (`--http-response json`, surface/direct_calls.py) on the gate profile: the other profiles' calls take
# the same path.
WAYS = [(t, p) for p in ("gate", "memory", "mesh") for t in ("stdio", "http")] + [("http-json", "gate")]


@pytest.mark.parametrize(("transport", "profile"), WAYS)
@pytest.mark.parametrize("client", CLIENTS)
def test_client_receives_what_the_gate_answers(
    client: str, transport: str, profile: str, served: dict[str, Served], tmp_path: Path
) -> None:
    server = served["gate-json" if transport == "http-json" else profile]
    config = server.config(transport.removesuffix("-json"), [call.wire() for call in SCENARIOS[profile]])
    if client == "python-sdk-current":
        import anyio

        report = anyio.run(drive, config)
    elif client == "python-sdk-1.x":
        report = run_driver([str(python_sdk_v1()), str(Path(__file__).parent / "driver_py1.py")], config, tmp_path)
    else:
        project = node_project("node_v1" if client == "ts-sdk-v1" else "node_v2")
        report = run_driver(["node", str(project / "client.mjs")], config, tmp_path, cwd=project)
    assert check_report(report, profile) == []

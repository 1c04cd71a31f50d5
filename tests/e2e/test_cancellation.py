"""A call the client gave up on stops (issue 37, item 2): `notifications/cancelled` cancels the call's work in the
gate, its engine statement included, and the gate says so (a `cancelled` decision line and call count). Over
JSON-RPC (the SDK's in-memory transport, `mode="legacy"`: the client sends notifications/cancelled when its call is
cancelled; the modern in-process path would cancel the handler's task directly), on the Bolt tier, whose double
holds a statement in the engine exactly where the test wants it (tests/bolt_double/faults.py), so the client
cancels while the gate waits on the engine, not by a timer."""

import json
import logging
import socket
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, Implementation

from tests.bolt_double import Action
from tests.conftest import CLIENT_NAME, bolt_faults, ok, settings_env, write_gate_argv
from tests.e2e.http_process import INITIALIZE, http_gate, mcp_client, mcp_post
from tests.e2e.test_telemetry import samples, value
from write_gate.access.agents import AgentsFile, Grant
from write_gate.core.cypher.statement import Statement
from write_gate.core.rate_limit import RATE_LABEL
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.serving.telemetry import Metrics, Telemetry
from write_gate.surface.server import build_server
from write_gate.surface.write_guard import REPLAYED_META

pytestmark = pytest.mark.anyio

DECISIONS = "write_gate.decisions"


async def cancelled_while_held(
    client: Client, settings: Settings, match: str, tool: str, args: dict[str, Any], *, release: bool = False
) -> Any:
    """Call `tool`, and cancel the call (the client sends notifications/cancelled) once its statement matching
    `match` waits in the engine; the held statement is handed back, still held unless `release` (then at once
    after the cancel)."""
    held = bolt_faults(settings).arm(Action.HOLD, match=match)
    with anyio.fail_after(60):
        async with anyio.create_task_group() as tasks:

            async def call() -> None:
                await client.call_tool(tool, args)
                raise AssertionError(f"{tool} answered after its call was cancelled")

            tasks.start_soon(call)
            while not held.reached.is_set():
                await anyio.sleep(0.01)
            tasks.cancel_scope.cancel()
            if release:
                held.release()
    return held


def cancelled_lines(caplog: pytest.LogCaptureFixture, tool: str) -> list[logging.LogRecord]:
    return [
        r
        for r in caplog.records
        if r.name == DECISIONS and getattr(r, "tool", None) == tool and getattr(r, "status", None) == "cancelled"
    ]


async def until_logged(caplog: pytest.LogCaptureFixture, tool: str) -> None:
    with anyio.fail_after(30):
        while not cancelled_lines(caplog, tool):
            await anyio.sleep(0.01)


PERSON = {"label": "Person", "source": "test", "extraction_method": "manual"}


def wire_client(settings: Settings, metrics: Metrics | None = None) -> Client:
    server = build_server(settings, auto_migrate=False, telemetry=Telemetry(metrics))
    return Client(server, mode="legacy", client_info=Implementation(name=CLIENT_NAME, version="1"))


@pytest.mark.parametrize("engine", ["bolt"], indirect=True)
async def test_a_cancelled_read_stops_in_the_gate_and_frees_its_engine_connection(
    settings: Settings, matrix_graph: GraphBackend, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=DECISIONS)
    metrics = Metrics()
    try:
        async with wire_client(settings, metrics) as client:
            await ok(client, "write_node", {**PERSON, "merge_keys": {"name": "Ada"}})
            held = await cancelled_while_held(client, settings, "CONTAINS $query", "search_nodes", {"query": "ad"})
            await until_logged(caplog, "search_nodes")  # the gate's work for the call ended
            # The statement is still held in the engine: the gate answers the next call on another connection.
            found = await ok(client, "open_nodes", {"names": ["Ada"]})
            assert [entity["name"] for entity in found["entities"]] == ["Ada"]
            assert not held.released.is_set()
    finally:
        bolt_faults(settings).clear()
    cancelled = {"tool": "search_nodes", "outcome": "cancelled", "error_code": "", "agent": "unlisted"}
    assert value(samples(metrics), "write_gate_tool_calls_total", **cancelled) == 1


@pytest.mark.parametrize("engine", ["bolt"], indirect=True)
async def test_a_write_cancelled_before_it_was_sent_is_not_applied(
    settings: Settings, matrix_graph: GraphBackend, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """A limited agent's write first takes a token from its bucket (a statement of its own); the client gives up
    while that statement is in the engine, so the write itself is never sent."""
    caplog.set_level(logging.INFO, logger=DECISIONS)
    agents = AgentsFile.load(tmp_path / "agents.toml")
    agents.add("limited", Grant(max_writes_per_minute=100))
    agents.save()
    limited = settings.model_copy(update={"agents_file": tmp_path / "agents.toml", "agent": "limited"})
    try:
        async with wire_client(limited) as client:
            grace = {**PERSON, "merge_keys": {"name": "Grace"}}
            held = await cancelled_while_held(client, settings, RATE_LABEL, "write_node", grace)
            held.release()  # the engine answers the token's statement now: nobody is waiting for it
            await until_logged(caplog, "write_node")
            await ok(client, "write_node", {**PERSON, "merge_keys": {"name": "Ada"}})  # the gate serves on
    finally:
        bolt_faults(settings).clear()
    names = await matrix_graph.read(Statement("MATCH (n:Person) RETURN n.name AS name"))
    assert names == [{"name": "Ada"}]


@pytest.mark.parametrize("engine", ["bolt"], indirect=True)
async def test_a_keyed_write_cancelled_in_the_engine_runs_to_its_end_and_its_retry_answers_its_outcome(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    """A write with an idempotency_key is run to its end once its key is claimed, however the client gave up
    (docs/fleets/safe-retries.md): its outcome is stored, so the retry is told what happened, never runs it twice."""
    grace = {**PERSON, "merge_keys": {"name": "Grace"}, "idempotency_key": "grace-1"}
    try:
        async with wire_client(settings) as client:
            await cancelled_while_held(client, settings, "MERGE (n:`Person`", "write_node", grace, release=True)
            with anyio.fail_after(30):
                while True:  # the stored outcome is there once the gate has run the call to its end
                    again = await client.call_tool("write_node", grace)
                    if not again.is_error:
                        break
                    assert (again.structured_content or {}).get("error_code") == "IDEMPOTENCY_IN_PROGRESS", again
            assert (again.meta or {}).get(REPLAYED_META) is True
            assert again.structured_content["status"] == "written"
    finally:
        bolt_faults(settings).clear()
    names = await matrix_graph.read(Statement("MATCH (n:Person) RETURN n.name AS name"))
    assert names == [{"name": "Grace"}]


def logged_cancelled(log: Path, tool: str) -> bool:
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    return any(line.get("tool") == tool and line.get("status") == "cancelled" for line in lines)


@pytest.mark.parametrize("engine", ["bolt"], indirect=True)
async def test_a_closed_http_stream_ends_its_call_in_the_gate(
    settings: Settings, matrix_graph: GraphBackend, tmp_path: Path
) -> None:
    """A client that drops its connection while its call's statement waits in the engine: the gate ends the call
    there, and the gate process serves on."""
    log = tmp_path / "gate.log"
    faults = bolt_faults(settings)
    try:
        with http_gate(settings, log, "--no-auth", "--no-migrate") as gate:
            status, headers, _ = mcp_post(gate.url, None, INITIALIZE)
            assert status == 200
            session = headers["mcp-session-id"]
            held = faults.arm(Action.HOLD, match="CONTAINS $query")
            call = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "search_nodes", "arguments": {"query": "ad"}},
            }
            stream = socket.create_connection(("127.0.0.1", gate.port))
            body = json.dumps(call).encode()
            head = (
                f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{gate.port}\r\nContent-Type: application/json\r\n"
                f"Accept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\n"
                f"MCP-Protocol-Version: 2025-06-18\r\nContent-Length: {len(body)}\r\n\r\n"
            )
            stream.sendall(head.encode() + body)
            with anyio.fail_after(60):
                while not held.reached.is_set():
                    await anyio.sleep(0.01)
            stream.close()  # the client gives up: its stream is gone
            with anyio.fail_after(60):
                while not logged_cancelled(log, "search_nodes"):
                    await anyio.sleep(0.05)
            assert gate.process.poll() is None
            async with mcp_client(gate.url, None) as client:  # the gate serves on while the statement is held
                await ok(client, "get_schema", {})
    finally:
        faults.clear()


@pytest.mark.parametrize("engine", ["bolt"], indirect=True)
async def test_a_closed_stdio_pipe_ends_its_call_in_the_gate(
    settings: Settings, matrix_graph: GraphBackend, tmp_path: Path
) -> None:
    """A client that goes away (closes both ends of its pipes) while its call's statement waits in the engine: the
    gate, which has no one left to answer, ends the call and then itself, cleanly; it does not wait out the drain
    that a client which only closed stdin is owed (answers_owed)."""
    log = tmp_path / "gate.log"
    faults = bolt_faults(settings)
    held = faults.arm(Action.HOLD, match="CONTAINS $query")
    try:
        with log.open("wb") as stderr:
            process = subprocess.Popen(
                write_gate_argv("serve", "--no-migrate"),
                env=settings_env(settings),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
            )
        assert process.stdin is not None and process.stdout is not None
        initialize = {**INITIALIZE, "params": {**INITIALIZE["params"], "clientInfo": {"name": "pipe", "version": "1"}}}
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        call["params"] = {"name": "search_nodes", "arguments": {"query": "ad"}}
        for message in (initialize, {"jsonrpc": "2.0", "method": "notifications/initialized"}, call):
            process.stdin.write(json.dumps(message).encode() + b"\n")
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 0  # initialized
        with anyio.fail_after(60):
            while not held.reached.is_set():
                await anyio.sleep(0.01)
        process.stdin.close()
        process.stdout.close()  # the client is gone: nobody reads an answer
        with anyio.fail_after(30):  # well inside the 60 s a client that only closed stdin is waited for
            while process.poll() is None:
                await anyio.sleep(0.05)
        assert process.returncode == 0, log.read_text()
        assert logged_cancelled(log, "search_nodes"), log.read_text()
        assert "Traceback" not in log.read_text()
    finally:
        faults.clear()
        if process.poll() is None:
            process.kill()
            process.wait()

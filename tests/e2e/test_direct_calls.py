"""With JSON answers a session's tools/call is answered in its POST's task (surface/direct_calls.py), not through
the SDK's session streams. Held to the SDK's path: the same raw requests to a gate answering in event streams (the
SDK's path throughout) and to one answering in JSON get the same JSON-RPC answers, refusals and protocol errors
included; a cancelled call is answered REQUEST_CANCELLED and stops; and the JSON gate says it took the direct path."""

import contextlib
import json
import os
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx2 as httpx
import psutil
import pytest

from tests.e2e.http_process import Gate, http_gate
from tests.e2e.test_sse_resume import open_session
from write_gate.serving.config import BackendKind, Settings

OLD = "2025-06-18"
PERSON = {"label": "Person", "source": "direct", "extraction_method": "manual"}


def started(tmp_path_factory: pytest.TempPathFactory, modes: tuple[str, ...], *args: str) -> Iterator[dict[str, Gate]]:
    running: dict[str, Gate] = {}
    with contextlib.ExitStack() as stack:
        for mode in modes:
            tmp = tmp_path_factory.mktemp(f"direct-{mode}")
            settings = Settings(
                backend=BackendKind.EMBEDDED, data_dir=tmp / "data", embedded_fsync="everysec", query_timeout_seconds=30
            )
            serve = ("--no-auth", "--http-response", mode, *args)
            running[mode] = stack.enter_context(
                http_gate(settings, tmp / "gate.log", *serve, WRITE_GATE_LOG_LEVEL="DEBUG")
            )
        yield running


@pytest.fixture(scope="module")
def gates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Gate]]:
    yield from started(tmp_path_factory, ("sse", "json"))


@pytest.fixture(scope="module")
def stateless_gates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Gate]]:
    yield from started(tmp_path_factory, ("sse", "json"), "--stateless")


def headers(session: str) -> dict[str, str]:
    return {"Accept": "application/json, text/event-stream", "Mcp-Session-Id": session, "MCP-Protocol-Version": OLD}


def answer_of(response: httpx.Response) -> Any:
    """The JSON-RPC answer in a JSON body or an event stream's data."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        [message] = [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")]
        return message
    return response.json()


def call(number: int | str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params}


SCRIPT: list[dict[str, Any]] = [
    call(1, {"name": "get_schema", "arguments": {}}),
    call("two", {"name": "open_nodes", "arguments": {"names": ["nobody"]}}),
    call(3, {"name": "no_such_tool", "arguments": {}}),  # a protocol error: INVALID_PARAMS
    call(4, {"arguments": {}}),  # no name: the request's own validation
    call(5, {"name": "open_nodes", "arguments": {"names": 5}}),  # the tool's refusal, INVALID_INPUT
    call(6, {"name": "write_node", "arguments": {**PERSON, "merge_keys": {}}}),  # the gate's refusal
    call(7, {"name": "get_schema"}),  # no arguments at all
    {**call(8, {"name": "get_schema", "arguments": {}}), "extra": 1},  # not plain: the SDK's path in both
    call(9, {"name": "open_nodes", "arguments": {"names": ["nobody"]}, "_meta": {"progressToken": "p9"}}),
]


def test_json_answers_are_the_sdk_paths_call_for_call(gates: dict[str, Gate]) -> None:
    answers: dict[str, list[Any]] = {}
    with httpx.Client(timeout=30) as http:
        for mode, gate in gates.items():
            session, _ = open_session(http, gate.url, OLD)
            answers[mode] = [
                answer_of(http.post(f"{gate.url}/mcp", json=body, headers=headers(session))) for body in SCRIPT
            ]
    assert answers["json"] == answers["sse"]
    assert answers["json"][2]["error"]["code"] == -32602 and "no_such_tool" in answers["json"][2]["error"]["message"]
    assert answers["json"][4]["result"]["structuredContent"]["error_code"] == "INVALID_INPUT"
    log = gates["json"].log.read_text()
    assert "its tools/call answered in their POSTs' tasks" in log  # the direct path was the one taken
    assert "its tools/call answered in their POSTs' tasks" not in gates["sse"].log.read_text()


def test_stateless_json_answers_are_the_sdk_paths_call_for_call(stateless_gates: dict[str, Gate]) -> None:
    """`--stateless`: no session, every request on its own; the JSON gate runs a tools/call without the server task
    the SDK's stateless path starts for each request."""
    answers: dict[str, list[Any]] = {}
    sent = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": OLD}
    with httpx.Client(timeout=30) as http:
        for mode, gate in stateless_gates.items():
            answers[mode] = [answer_of(http.post(f"{gate.url}/mcp", json=body, headers=sent)) for body in SCRIPT]
    assert answers["json"] == answers["sse"]
    assert "a stateless tools/call answered without a server task" in stateless_gates["json"].log.read_text()


def test_a_call_before_the_handshake_ends_is_answered_as_the_sdk_answers_it(gates: dict[str, Gate]) -> None:
    """A tools/call after initialize but before notifications/initialized meets the SDK's initialisation gate on
    either path (the JSON gate learns the session's connection at initialize, and the gate is the SDK's kernel's:
    initialize accepted, it answers)."""
    answers = {}
    hello = {"protocolVersion": OLD, "capabilities": {}, "clientInfo": {"name": "early", "version": "1"}}
    with httpx.Client(timeout=30) as http:
        for mode, gate in gates.items():
            opened = http.post(
                f"{gate.url}/mcp",
                json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello},
                headers={"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": OLD},
            )
            session = opened.headers["mcp-session-id"]
            early = call(1, {"name": "get_schema", "arguments": {}})
            answers[mode] = answer_of(http.post(f"{gate.url}/mcp", json=early, headers=headers(session)))
    assert answers["json"] == answers["sse"] and answers["json"]["id"] == 1, answers


def engine_of(gate: Gate) -> psutil.Process:
    data = str(Path(gate.log).parent / "data")
    for process in psutil.process_iter(["name"]):
        with contextlib.suppress(psutil.Error):
            if (process.info["name"] or "").startswith("redis-server") and process.cwd() == data:
                return process
    raise AssertionError(f"no engine serves {data}")


def test_a_cancelled_call_stops_and_is_answered_request_cancelled(gates: dict[str, Gate]) -> None:
    """The engine paused, a write waits on it; the client's notifications/cancelled ends the call at once, answered
    REQUEST_CANCELLED (the SDK's 2025-era answer), and the session's next call is answered when the engine is back."""
    gate = gates["json"]
    engine = engine_of(gate)
    with httpx.Client(timeout=60) as http:
        session, _ = open_session(http, gate.url, OLD)
        write = call(1, {"name": "write_node", "arguments": {**PERSON, "merge_keys": {"name": "Paused"}}})
        os.kill(engine.pid, signal.SIGSTOP)
        try:
            with ThreadPoolExecutor(1) as waiting:
                pending = waiting.submit(http.post, f"{gate.url}/mcp", json=write, headers=headers(session))
                time.sleep(1.0)  # the write is waiting on the engine by now
                assert not pending.done()
                cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
                assert http.post(f"{gate.url}/mcp", json=cancel, headers=headers(session)).status_code == 202
                cancelled = answer_of(pending.result(timeout=10))
        finally:
            os.kill(engine.pid, signal.SIGCONT)
        after = call(2, {"name": "get_schema", "arguments": {}})
        answered = answer_of(http.post(f"{gate.url}/mcp", json=after, headers=headers(session)))
    assert cancelled == {"jsonrpc": "2.0", "id": 1, "error": {"code": -32800, "message": "Request cancelled"}}
    assert "result" in answered


def test_a_lone_surrogate_in_a_tool_call_is_the_tools_rejection_in_either_mode(gates: dict[str, Gate]) -> None:
    """As over stdio (test_stdio_protocol): INVALID_INPUT from the tool, naming the argument, not a protocol error."""
    call_with = b'{"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "search_nodes", "arguments": '
    for query in (b'{"query": "Sur\\udc00x"}', b'{"query": "Bad\xff\xfeUtf"}'):  # and bytes that are no UTF-8
        answers = {}
        with httpx.Client(timeout=30) as http:
            for mode, gate in gates.items():
                session, _ = open_session(http, gate.url, OLD)
                sent = {**headers(session), "Content-Type": "application/json"}
                answers[mode] = answer_of(http.post(f"{gate.url}/mcp", content=call_with + query + b"}}", headers=sent))
        assert answers["json"] == answers["sse"]
        rejection = answers["json"]["result"]["structuredContent"]
        assert answers["json"]["result"]["isError"] is True
        assert (rejection["error_code"], rejection["details"]["field"]) == ("INVALID_INPUT", "query"), rejection

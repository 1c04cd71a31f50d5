"""SSE over streamable HTTP, as the 2025-11-25 specification has it: every stream opens with a priming event
(an id, empty data, `retry`), and a client that lost a stream gets what it missed by reconnecting with
Last-Event-ID, from its own session only. Raw HTTP against `write-gate serve --transport http`."""

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx2 as httpx
import pytest

from tests.e2e.http_process import Gate, http_gate
from write_gate.serving.config import BackendKind, Settings
from write_gate.surface.server import SSE_RETRY_MS

NEW, OLD = "2025-11-25", "2025-06-18"


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gate]:
    tmp = tmp_path_factory.mktemp("sse")
    settings = Settings(backend=BackendKind.EMBEDDED, data_dir=tmp / "data", embedded_fsync="everysec")
    with http_gate(settings, tmp / "gate.log", "--no-auth") as running:
        yield running


def events(response: httpx.Response, count: int | None = None, *, messages: bool = False) -> list[dict[str, str]]:
    """The SSE events of a response, as field -> value, until `count` of them or the stream's end;
    `messages`: only those with data (not priming events)."""
    found: list[dict[str, str]] = []
    event: dict[str, str] = {}
    for line in response.iter_lines():
        if line:
            name, _, value = line.partition(":")
            event[name] = value.removeprefix(" ")
            continue
        if event and (event.get("data") or not messages):
            found.append(event)
        event = {}
        if count is not None and len(found) == count:
            break
    return found


def post(http: httpx.Client, url: str, body: dict[str, Any], version: str, session: str | None = None) -> Any:
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": version}
    if session:
        headers["Mcp-Session-Id"] = session
    return http.stream("POST", f"{url}/mcp", json=body, headers=headers)


def open_session(http: httpx.Client, url: str, version: str) -> tuple[str, list[dict[str, str]]]:
    hello = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw-sse", "version": "1"}}
    with post(http, url, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}, version) as answer:
        session, opened = answer.headers["mcp-session-id"], events(answer, 2 if version == NEW else 1)
    done = http.post(
        f"{url}/mcp",
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers={"Accept": "application/json, text/event-stream", "Mcp-Session-Id": session},
    )
    assert done.status_code == 202
    return session, opened


def call(number: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": {"name": "get_schema", "arguments": {}}}


def test_a_stream_is_primed_and_a_dropped_one_resumes_in_its_session_only(gate: Gate) -> None:
    with httpx.Client(timeout=30) as http:
        session, opened = open_session(http, gate.url, NEW)
        assert opened[0].keys() >= {"id", "data", "retry"} and opened[0]["data"] == ""
        assert opened[0]["retry"] == str(SSE_RETRY_MS) and json.loads(opened[1]["data"])["id"] == 0

        with post(http, gate.url, call(7), NEW, session) as answer:
            [priming] = events(answer, 1)  # the client drops the stream before the answer
        assert priming["data"] == ""

        time.sleep(1)  # the answer is stored by now, so it is replayed (else the resumed stream sends it live)
        resume = {"Accept": "text/event-stream", "Mcp-Session-Id": session, "Last-Event-ID": priming["id"]}
        with http.stream("GET", f"{gate.url}/mcp", headers={**resume, "MCP-Protocol-Version": NEW}) as replay:
            missed = [json.loads(e["data"]) for e in events(replay, 1, messages=True)]
        assert missed[0]["id"] == 7 and "node_labels" in missed[0]["result"]["structuredContent"]

        other, _ = open_session(http, gate.url, NEW)
        foreign = {**resume, "Mcp-Session-Id": other, "MCP-Protocol-Version": NEW}
        with http.stream("GET", f"{gate.url}/mcp", headers=foreign) as replay:
            assert events(replay, messages=True) == []  # another session's events stay its own


def test_a_client_before_2025_11_25_gets_no_empty_event(gate: Gate) -> None:
    """Older clients parse every event's data as JSON: the SDK primes only 2025-11-25 streams."""
    with httpx.Client(timeout=30) as http:
        session, opened = open_session(http, gate.url, OLD)
        with post(http, gate.url, call(1), OLD, session) as answer:
            answered = events(answer, 1)
    assert all(e.get("data") for e in [*opened, *answered]) and json.loads(answered[0]["data"])["id"] == 1

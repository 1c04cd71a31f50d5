"""How `write-gate serve --transport http` answers a call: an event stream (`sse`, the default) or one
application/json body (`WRITE_GATE_HTTP_RESPONSE=json` or `--http-response json`). The SDK's client in each mode,
and raw HTTP for the content type and for where a call's log message goes with JSON answers: the session's GET
stream, the only stream it has."""

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from tests.conftest import ok, run_write_gate, settings_env
from tests.e2e.http_process import Gate, http_gate, mcp_client
from tests.e2e.test_sse_resume import events, open_session
from write_gate.serving.config import BackendKind, Settings

pytestmark = pytest.mark.anyio

PERSON = {"label": "Person", "source": "answers", "extraction_method": "manual"}
OLD = "2025-06-18"
GUARD_SECONDS = 60


@pytest.fixture(scope="module", params=["sse", "json"])
def gate(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Gate]]:
    mode: str = request.param
    tmp = tmp_path_factory.mktemp(f"answers-{mode}")
    settings = Settings(backend=BackendKind.EMBEDDED, data_dir=tmp / "data", embedded_fsync="everysec")
    # The environment names the mode for one, the flag for the other: both ways in are served.
    args, env = (("--http-response", "json"), {}) if mode == "json" else ((), {"WRITE_GATE_HTTP_RESPONSE": "sse"})
    with http_gate(settings, tmp / "gate.log", "--no-auth", *args, **env) as running:
        yield mode, running


def tool_call(number: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
async def test_a_client_session_writes_and_reads_in_either_mode(gate: tuple[str, Gate], protocol: str) -> None:
    _, running = gate
    async with mcp_client(running.url, None, protocol) as client:
        for name in ("Ada", "Grace", "Edsger"):
            written = await ok(client, "write_node", {**PERSON, "merge_keys": {"name": name}})
            assert written["status"] in ("created", "written", "merged", "unchanged"), written
        opened = await ok(client, "open_nodes", {"names": ["Ada", "Grace", "Edsger"]})
    assert sorted(e["name"] for e in opened["entities"]) == ["Ada", "Edsger", "Grace"]


def test_a_call_is_answered_in_the_mode_set(gate: tuple[str, Gate]) -> None:
    mode, running = gate
    with httpx.Client(timeout=30) as http:
        session, _ = open_session(http, running.url, OLD)
        headers = {"Accept": "application/json, text/event-stream", "Mcp-Session-Id": session}
        headers["MCP-Protocol-Version"] = OLD
        answer = http.post(f"{running.url}/mcp", json=tool_call(1, "get_schema", {}), headers=headers)
    assert answer.status_code == 200
    content_type = answer.headers["content-type"].split(";")[0]
    if mode == "json":
        assert content_type == "application/json"
        assert "node_labels" in answer.json()["result"]["structuredContent"]
    else:
        assert content_type == "text/event-stream"
        [message] = [json.loads(line[5:]) for line in answer.text.splitlines() if line.startswith("data:")]
        assert message["id"] == 1 and "node_labels" in message["result"]["structuredContent"]


def test_with_json_answers_a_calls_log_message_goes_to_the_get_stream(gate: tuple[str, Gate]) -> None:
    """The SDK drops a notification tied to a call answered in JSON; the gate sends it on the session's GET
    stream instead, where a client that keeps one (the SDK's does) hears it."""
    mode, running = gate
    if mode != "json":
        pytest.skip("an event-stream answer carries the call's own messages (test_capabilities)")
    with httpx.Client(timeout=httpx.Timeout(30)) as http:
        session, _ = open_session(http, running.url, OLD)
        headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": OLD}
        posting = {**headers, "Accept": "application/json, text/event-stream"}
        level = {"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "info"}}
        assert http.post(f"{running.url}/mcp", json=level, headers=posting).status_code == 200
        with http.stream("GET", f"{running.url}/mcp", headers={**headers, "Accept": "text/event-stream"}) as stream:
            write = tool_call(2, "write_node", {**PERSON, "merge_keys": {"name": "Barbara"}})
            answer = http.post(f"{running.url}/mcp", json=write, headers=posting)
            assert answer.headers["content-type"].startswith("application/json") and "result" in answer.json()
            # Read aside, so a message that never comes fails the test rather than hanging it (a guard, not a
            # measure: the stream is closed to end the read).
            with ThreadPoolExecutor(1) as reader:
                reading = reader.submit(events, stream, 1, messages=True)
                try:
                    [heard] = [json.loads(e["data"]) for e in reading.result(timeout=GUARD_SECONDS)]
                except FuturesTimeout:
                    stream.close()
                    pytest.fail("no log message came on the GET stream")
    assert heard["method"] == "notifications/message"
    assert heard["params"]["data"]["tool"] == "write_node" and heard["params"]["data"]["status"] != "rejected"


def test_an_unknown_mode_is_a_one_line_error(tmp_path: Path) -> None:
    env = settings_env(Settings(backend=BackendKind.EMBEDDED, data_dir=tmp_path / "data"))
    flagged = run_write_gate("serve", "--transport", "http", "--http-response", "xml", env=env)
    assert flagged.returncode == 2 and "invalid choice" in flagged.stderr and "Traceback" not in flagged.stderr
    named = run_write_gate("serve", "--transport", "http", env={**env, "WRITE_GATE_HTTP_RESPONSE": "xml"})
    assert named.returncode != 0 and "http_response" in named.stderr and "Traceback" not in named.stderr

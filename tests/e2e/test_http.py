"""`write-gate serve --transport http` as a fleet runs it: bearer tokens from an agents file, grants,
written_by from the token, /health, decision logs, and many concurrent sessions."""

import json
import socket
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.conftest import GATE_TOOLS, MATRIX_SCHEMAS, settings_env, write_gate_argv
from write_gate.backends import open_backend
from write_gate.config import BackendKind, Settings
from write_gate.cypher import Statement

pytestmark = pytest.mark.anyio
READ_TOOLS = {"search_nodes", "open_nodes", "read_graph", "get_schema"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Fleet:
    url: str
    settings: Settings
    tokens: dict[str, str]
    process: subprocess.Popen[bytes]
    log: Path


def add_agent(settings: Settings, agents_file: Path, name: str, *grant: str) -> str:
    result = subprocess.run(
        write_gate_argv("agents", "add", name, "--file", str(agents_file), *grant),
        env=settings_env(settings),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    tmp = tmp_path_factory.mktemp("fleet")
    agents_file = tmp / "agents.toml"
    settings = Settings(
        backend=BackendKind.EMBEDDED, data_dir=tmp / "data", embedded_fsync="everysec", agents_file=agents_file
    )
    tokens = {
        "writer": add_agent(settings, agents_file, "writer"),
        "reader": add_agent(settings, agents_file, "reader", "--grant", "reader"),
        "orgs": add_agent(settings, agents_file, "orgs", "--labels", "Organization", "--types", "WORKS_FOR"),
    }
    assert "token_sha256" in agents_file.read_text() and not any(t in agents_file.read_text() for t in tokens.values())
    subprocess.run(
        write_gate_argv("schema", "load", str(MATRIX_SCHEMAS)),
        env=settings_env(settings),
        check=True,
        capture_output=True,
        timeout=60,
    )
    port = free_port()
    log = tmp / "gate.log"
    env = {**settings_env(settings), "WRITE_GATE_PORT": str(port), "WRITE_GATE_AGENTS_FILE": str(agents_file)}
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            write_gate_argv("serve", "--transport", "http"), env=env, stdout=subprocess.DEVNULL, stderr=log_file
        )
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=1) as response:
                if response.status == 200:
                    break
        except (OSError, urllib.error.HTTPError):
            assert process.poll() is None, log.read_text()
            anyio.run(anyio.sleep, 0.1)
    yield Fleet(url, settings, tokens, process, log)
    process.terminate()
    process.wait(timeout=30)


@asynccontextmanager
async def session(fleet: Fleet, token: str | None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(f"{fleet.url}/mcp", http_client=http)) as client,
    ):
        yield client


def post_without_token(url: str, token: str | None) -> int:
    request = urllib.request.Request(
        f"{url}/mcp",
        data=b"{}",
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json",
            **({"Authorization": f"Bearer {token}"} if token else {}),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def write(name: str, label: str = "Person", **props: Any) -> dict[str, Any]:
    return {
        "label": label,
        "merge_keys": {"name": name},
        "properties": props,
        "source": "fleet",
        "extraction_method": "api",
    }


def test_missing_or_unknown_tokens_get_401(fleet: Fleet) -> None:
    assert post_without_token(fleet.url, None) == 401
    assert post_without_token(fleet.url, "wg_not-a-real-token") == 401


def test_health_answers_without_a_token(fleet: Fleet) -> None:
    with urllib.request.urlopen(f"{fleet.url}/health", timeout=10) as response:
        body = json.loads(response.read())
    assert body["status"] == "ok" and body["engine"] == "reachable" and body["backend"] == "embedded"
    assert (
        body["registry"]["node_labels"] == 6 and body["version"]
    )  # the core registry (serve migrates) and the matrix one


async def test_a_writer_sees_read_and_write_tools_and_is_stamped_as_itself(fleet: Fleet) -> None:
    async with session(fleet, fleet.tokens["writer"]) as client:
        assert {t.name for t in (await client.list_tools()).tools} == GATE_TOOLS - {"refresh_schema_cache"}  # no admin
        result = await client.call_tool("write_node", write("Ada"))
        assert not result.is_error, result.structured_content
    backend = await open_backend(fleet.settings)
    try:
        [row] = await backend.read(Statement("MATCH (n:Person {name: 'Ada'}) RETURN n.written_by AS by"))
    finally:
        await backend.close()
    assert row["by"] == "writer"


async def test_written_by_cannot_be_claimed(fleet: Fleet) -> None:
    async with session(fleet, fleet.tokens["writer"]) as client:
        result = await client.call_tool("write_node", write("Eve", written_by="admin"))
    assert result.is_error and result.structured_content["error_code"] == "SCHEMA_PROTECTED_FIELD"


async def test_a_reader_sees_and_may_use_read_tools_only(fleet: Fleet) -> None:
    async with session(fleet, fleet.tokens["reader"]) as client:
        assert {t.name for t in (await client.list_tools()).tools} == READ_TOOLS
        result = await client.call_tool("write_node", write("Mallory"))
        assert result.is_error and result.structured_content["error_code"] == "PERMISSION_DENIED"
        assert not (await client.call_tool("read_graph", {})).is_error


async def test_label_and_type_grants(fleet: Fleet) -> None:
    async with session(fleet, fleet.tokens["orgs"]) as client:
        assert not (await client.call_tool("write_node", write("Acme", "Organization"))).is_error
        denied = await client.call_tool("write_node", write("Bob"))
        assert denied.structured_content["error_code"] == "PERMISSION_DENIED"
        assert denied.structured_content["details"]["labels"] == ["Person"]
        # merge_endpoints would create a Person stub: that is a Person write too.
        rel = {
            "type": "WORKS_FOR",
            "from_label": "Person",
            "from_keys": {"name": "Zed"},
            "to_label": "Organization",
            "to_keys": {"name": "Acme"},
            "source": "fleet",
            "extraction_method": "api",
            "endpoint_policy": "merge_endpoints",
        }
        assert (await client.call_tool("write_relationship", rel)).structured_content[
            "error_code"
        ] == "PERMISSION_DENIED"


def test_one_log_line_per_write_decision_and_no_secrets(fleet: Fleet) -> None:
    records = [json.loads(line) for line in fleet.log.read_text().splitlines()]  # every line is one JSON object
    assert any(r["logger"].startswith("uvicorn") for r in records)  # the web server's own lines too
    lines = [r for r in records if r["logger"] == "write_gate.decisions"]
    expected = {"agent": "reader", "tool": "write_node", "status": "rejected", "error_code": "PERMISSION_DENIED"}
    assert expected.items() <= next(line for line in lines if line["agent"] == "reader").items()
    assert all({"agent", "tool", "status", "latency_ms"} <= line.keys() for line in lines)
    text = fleet.log.read_text()
    assert not any(token in text for token in fleet.tokens.values())
    assert "Ada" not in text  # property values are not logged


async def test_16_concurrent_sessions_200_writes_each_one_node_per_key(fleet: Fleet) -> None:
    """Overlapping merge keys from 16 sessions: exactly one node per key, every acknowledged write kept."""
    acknowledged: dict[tuple[str, int], int] = {}

    async def agent(n: int) -> None:
        async with session(fleet, fleet.tokens["writer"]) as client:
            for i in range(200):
                key = f"shared-{i % 50}"  # every session writes the same 50 keys
                args = write(key, **{f"s{n}": i})
                result = await client.call_tool("write_node", args)
                assert not result.is_error, result.structured_content
                acknowledged[(key, n)] = i

    with anyio.fail_after(600):
        async with anyio.create_task_group() as tasks:
            for n in range(16):
                tasks.start_soon(agent, n)
    backend = await open_backend(fleet.settings)
    try:
        rows = await backend.read(
            Statement("MATCH (n:Person) WHERE n.name STARTS WITH 'shared-' RETURN n.name AS name, properties(n) AS p")
        )
    finally:
        await backend.close()
    assert sorted(r["name"] for r in rows) == sorted(f"shared-{k}" for k in range(50))  # one node per key
    by_name = {r["name"]: r["p"] for r in rows}
    for (key, n), last in acknowledged.items():
        assert by_name[key][f"s{n}"] == last  # the last acknowledged value of each session is there

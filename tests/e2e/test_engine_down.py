"""Starting when things are down (issue 9, item 4), and several gates on one graph (item 5), on both backends that
reach an engine over the network: external FalkorDB, and the Memgraph backend through the Bolt double (the driver's
own connection failures and retries, not Memgraph's semantics).

`write-gate serve` always starts. With the engine unreachable every tool says so (never "unknown label"
from an empty registry, never an empty result or "deleted"), /health says why, and the first load is
retried in the background until the engine is there. Gates on one engine notice a registry change
made through any of them, or by the CLI, within the poll interval."""

import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, Implementation, StdioServerParameters
from starlette.testclient import TestClient

from tests.bolt_double import BoltDouble, DoubleThread
from tests.conftest import SHORT_POLLS, settings_env, start_falkordb_server, write_gate_argv
from tests.e2e.http_process import free_port
from write_gate.serving.config import BackendKind, Settings
from write_gate.surface.server import http_app

pytestmark = pytest.mark.anyio
PERSON = {"label": "Person", "merge_keys": {"name": "Ada"}, "source": "t", "extraction_method": "api"}


REMOTE = ["falkordb", "bolt"]


def external(port: int, kind: str = "falkordb", **changes: Any) -> Settings:
    """Settings for an engine on this port: FalkorDB itself, or the Memgraph backend through the Bolt double."""
    if kind == "bolt":
        where: dict[str, Any] = {"backend": BackendKind.MEMGRAPH, "memgraph_url": f"bolt://127.0.0.1:{port}"}
    else:
        where = {"backend": BackendKind.FALKORDB, "falkordb_url": f"redis://127.0.0.1:{port}"}
    defaults = {"graph_name": "g", "memgraph_database": "g", "query_timeout_seconds": 2, **SHORT_POLLS}
    return Settings(**{**where, **defaults, **changes})


class Remote:
    """An engine the test starts and stops on a port of its choosing: FalkorDB, or the Bolt double in front of one
    (stopping the double is the engine going away; the FalkorDB behind it is stopped at the end)."""

    def __init__(self, kind: str, directory: Path, port: int | None = None) -> None:
        self.kind, self.directory, self.port = kind, directory, port or free_port()
        self._falkordb: subprocess.Popen[bytes] | None = None
        self._double: DoubleThread | None = None

    def settings(self, **changes: Any) -> Settings:
        return external(self.port, self.kind, **changes)

    def start(self) -> None:
        if self.kind == "falkordb":
            self._falkordb, _ = start_falkordb_server(self.directory, self.port)
            return
        # Its own port, never the double's: one chosen by the system just after the double's was let go can be the
        # same one (CI: the double then found its port taken by the engine behind it).
        behind = free_port()
        while behind == self.port:
            behind = free_port()
        self._falkordb, url = start_falkordb_server(self.directory, behind)
        self._double = DoubleThread(BoltDouble(url))
        self._double.start(self.port)

    def stop(self) -> None:
        if self._double is not None:
            self._double.stop()
            self._double = None
        if self._falkordb is not None:
            self._falkordb.terminate()
            self._falkordb.wait(10)
            self._falkordb = None


@asynccontextmanager
async def serve(settings: Settings, *args: str, poll: float = 0.3) -> AsyncIterator[Client]:
    command, *rest = write_gate_argv("serve", *args)
    env = {**settings_env(settings), "WRITE_GATE_REGISTRY_POLL_SECONDS": str(poll)}
    params = StdioServerParameters(command=command, args=rest, env=env)
    async with Client(params, read_timeout_seconds=60, client_info=Implementation(name="t", version="1")) as client:
        yield client


async def code(client: Client, tool: str, args: dict[str, Any]) -> str | None:
    result = await client.call_tool(tool, args)
    return result.structured_content.get("error_code") if result.is_error else None


async def eventually(check: Any, seconds: float = 30.0) -> None:
    with anyio.fail_after(seconds):
        while not await check():
            await anyio.sleep(0.2)


@pytest.mark.parametrize("kind", REMOTE)
async def test_a_gate_starts_without_its_engine_and_recovers_when_it_comes(tmp_path: Path, kind: str) -> None:
    engine = Remote(kind, tmp_path)
    settings = engine.settings()
    async with serve(settings) as gate, serve(settings, "--profile", "memory") as memory:
        assert {tool.name for tool in (await gate.list_tools()).tools} >= {"write_node", "read_graph"}
        for tool, args in (
            ("write_node", PERSON),
            ("open_nodes", {"names": ["Ada"]}),
            ("search_nodes", {"query": "a"}),
            ("read_graph", {}),
            ("get_schema", {}),
        ):
            assert await code(gate, tool, args) == "SCHEMA_SOURCE_UNAVAILABLE", tool
        for tool, args in (
            ("delete_entities", {"entityNames": ["Ada"]}),
            ("create_entities", {"entities": [{"name": "Ada", "entityType": "person"}]}),
        ):
            assert await code(memory, tool, args) == "SCHEMA_SOURCE_UNAVAILABLE", tool
        engine.start()  # the engine arrives; migrations and the registry follow
        try:

            async def written() -> bool:
                return await code(gate, "write_node", PERSON) is None

            async def memory_loaded() -> bool:
                return await code(memory, "open_nodes", {"names": ["Ada"]}) is None

            await eventually(written)
            await eventually(memory_loaded)
            opened = await gate.call_tool("open_nodes", {"names": ["Ada"]})
            assert [e["name"] for e in opened.structured_content["entities"]] == ["Ada"]
        finally:
            engine.stop()
        # The loaded engine goes away: reads and writes say so, nothing answers empty or "deleted". Each tool's way of
        # saying so sits above the engine (every tool on FalkorDB); how the backend tells an engine away from a slow
        # one is the engine's (a read, a write and an admin call through the Bolt tier's driver, its retries each
        # taking the query timeout).
        for tool, args in ENGINE_AWAY_CALLS[: None if kind == "falkordb" else 3]:
            assert await code(gate, tool, args) == "BACKEND_UNAVAILABLE", tool
        for tool, args in (
            ("delete_entities", {"entityNames": ["Ada"]}),
            ("open_nodes", {"names": ["Ada"]}),
            ("search_nodes", {"query": "ada"}),
            ("read_graph", {}),
        )[: None if kind == "falkordb" else 2]:
            assert await code(memory, tool, args) == "BACKEND_UNAVAILABLE", tool


ENGINE_AWAY_CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("write_node", PERSON),  # a write, a read and an admin call first: every tier runs these three
    ("open_nodes", {"names": ["Ada"]}),
    ("export_graph", {"format": "backup"}),
    ("search_nodes", {"query": "ada"}),
    ("read_graph", {}),
    # Seed 004's tools (issue 14): none answers empty or done while the engine is away.
    ("add_tags", {"entityName": "Ada", "tags": ["x"]}),
    ("get_children", {"entityName": "Ada"}),
    ("archive_entities", {"tags": ["x"], "dryRun": True}),
    ("get_graph_stats", {}),
    # A batch the engine failed item by item answered done, written 0: a client reading isError saw success.
    ("write_nodes", {"items": [PERSON, {**PERSON, "merge_keys": {"name": "Bo"}}]}),
    ("list_saved_searches", {}),
    ("save_search", {"name": "s", "query": "ada"}),
    ("export_graph", {"format": "json"}),
    ("import_graph", {"format": "jsonl", "data": '{"type": "entity", "name": "B", "entityType": "Person"}'}),
    # Issue 15's quarantine: neither lists nor replays nothing while the engine is away.
    ("list_quarantine", {}),
    ("replay_quarantine", {"label": "Vehicle"}),
)


@pytest.mark.parametrize("kind", REMOTE)
def test_health_says_why_while_the_engine_is_away(kind: str) -> None:
    app = http_app(external(free_port(), kind), require_auth=False)
    with TestClient(app) as http:
        answer = http.get("/health")
    assert answer.status_code == 503
    body = answer.json()
    assert body["engine"] == "unreachable" and body["registry"]["loaded"] is False
    assert "engine unreachable" in body["registry"]["error"]


@pytest.mark.parametrize("kind", REMOTE)
def test_serve_on_an_unreachable_engine_does_not_exit(kind: str) -> None:
    """Before: an external FalkorDB down at start made `serve` exit with an ExceptionGroup traceback."""
    command = write_gate_argv("serve")
    env = {**settings_env(external(free_port(), kind)), "WRITE_GATE_REGISTRY_POLL_SECONDS": "0.3"}
    process = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            process.wait(3)
    finally:
        process.kill()
        _, stderr = process.communicate(timeout=10)
    assert b"Traceback" not in stderr


@pytest.mark.parametrize("kind", REMOTE)
async def test_gates_on_one_graph_see_a_schema_load_made_anywhere(tmp_path: Path, kind: str) -> None:
    engine = Remote(kind, tmp_path)
    engine.start()
    try:
        settings = engine.settings(graph_name="shared", memgraph_database="shared", unknown_label_policy="reject")
        vehicle = tmp_path / "vehicle.json"
        vehicle.write_text('{"name": "Vehicle", "merge_keys": ["name"], "required_properties": ["name"]}')
        car = {**PERSON, "label": "Vehicle", "merge_keys": {"name": "Car"}}
        async with serve(settings) as one, serve(settings, "--no-migrate") as two:
            assert await code(one, "write_node", car) == "SCHEMA_UNKNOWN_LABEL"
            assert await code(two, "write_node", car) == "SCHEMA_UNKNOWN_LABEL"
            loaded = subprocess.run(
                write_gate_argv("schema", "load", str(vehicle)),
                env=settings_env(settings),
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert loaded.returncode == 0, loaded.stderr
            # No refresh_schema_cache anywhere: both notice the registry's version within the poll interval.
            for gate in (one, two):

                async def accepted(gate: Client = gate) -> bool:
                    return await code(gate, "write_node", car) is None

                await eventually(accepted, seconds=10)
    finally:
        engine.stop()

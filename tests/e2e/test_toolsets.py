"""Toolsets through real MCP client sessions (issue 27): what each profile lists by default and when asked, that
a listed set changes what is shown and never what may be called, grants naming sets, and discovery on demand:
list_toolsets and enable_toolset, whose set joins that session's list only, announced to it alone, in process,
over stdio and over streamable HTTP, with two sessions open at once."""

import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, Implementation, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.conftest import (
    DISCOVERY_TOOLS,
    GATE_DEFAULT_TOOLS,
    GATE_TOOLS,
    MEMORY_DEFAULT_TOOLS,
    ok,
    rejected,
    settings_env,
    write_gate_argv,
)
from tests.e2e.http_process import http_gate
from write_gate.access.agents import FULL, READER, AgentsFile, Grant
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.surface.server import build_server
from write_gate.surface.tool_schemas import schema_bytes

pytestmark = pytest.mark.anyio

HISTORY = {"get_history", "list_conflicts", "resolve_conflict"}


class Session:
    """A handshake-era client session (every released client speaks one) and the list changes it was told of."""

    def __init__(self) -> None:
        self.changes = 0
        self.client: Client

    async def on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.changes += 1

    async def names(self) -> set[str]:
        return {tool.name for tool in (await self.client.list_tools()).tools}


@asynccontextmanager
async def session(server: Any, http: Any = None) -> AsyncIterator[Session]:
    """`server`: a built server (in process), StdioServerParameters, or an HTTP URL with its httpx client."""
    opened = Session()
    transport = streamable_http_client(server, http_client=http) if http is not None else server
    info = Implementation(name="toolsets-test", version="1")
    async with Client(
        transport, mode="legacy", message_handler=opened.on_message, read_timeout_seconds=60, client_info=info
    ) as client:
        opened.client = client
        yield opened


def stdio(settings: Settings) -> StdioServerParameters:
    command, *args = write_gate_argv("serve", "--no-migrate")
    return StdioServerParameters(command=command, args=args, env=settings_env(settings))


async def enable_in_one_of_two(first: Session, second: Session) -> None:
    """Both list the core and discovery; `first` enables history: its list grows and it is told, once; the other
    session's list stays as it was, and it is told nothing."""
    for one in (first, second):
        assert await one.names() == GATE_DEFAULT_TOOLS | DISCOVERY_TOOLS
    enabled = await ok(first.client, "enable_toolset", {"toolset": "history"})
    assert (enabled["status"], enabled["toolset"], set(enabled["tools"])) == ("enabled", "history", HISTORY)
    assert first.changes == 1  # on the enabling call's own stream, before its answer
    assert await first.names() == GATE_DEFAULT_TOOLS | DISCOVERY_TOOLS | HISTORY
    assert await second.names() == GATE_DEFAULT_TOOLS | DISCOVERY_TOOLS and second.changes == 0
    await ok(first.client, "enable_toolset", {"toolset": "history"})  # already listed: no change to announce
    assert first.changes == 1
    listed = {ts["name"]: ts["listed"] for ts in (await ok(second.client, "list_toolsets", {}))["toolsets"]}
    assert listed["history"] is False and listed["core"] is True
    listed = {ts["name"]: ts["listed"] for ts in (await ok(first.client, "list_toolsets", {}))["toolsets"]}
    assert listed["history"] is True


# --- what is listed ---------------------------------------------------------------------------------------


async def test_each_profile_lists_its_defaults_and_more_when_asked(settings: Settings) -> None:
    async def listed(config: Settings, profile: str = "gate") -> list[dict[str, Any]]:
        async with Client(build_server(config, profile=profile, auto_migrate=False)) as client:
            return [
                t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in (await client.list_tools()).tools
            ]

    gate = await listed(settings)
    assert {t["name"] for t in gate} == GATE_DEFAULT_TOOLS and schema_bytes(gate) <= 12_000
    assert {t["name"] for t in await listed(settings, "memory")} == MEMORY_DEFAULT_TOOLS
    history = settings.model_copy(update={"toolsets": "history"})
    assert {t["name"] for t in await listed(history)} == GATE_DEFAULT_TOOLS | HISTORY
    assert {t["name"] for t in await listed(settings.model_copy(update={"toolsets": "all"}))} == GATE_TOOLS
    dynamic = settings.model_copy(update={"dynamic_toolsets": True})
    assert {t["name"] for t in await listed(dynamic, "memory")} == MEMORY_DEFAULT_TOOLS | DISCOVERY_TOOLS


async def test_a_tool_not_listed_still_answers_when_the_grant_allows_it(
    settings: Settings, matrix_graph: GraphBackend, tmp_path: Path
) -> None:
    """Toolsets choose what is listed; grants and WRITE_GATE_TOOLS what may be called."""
    async with Client(build_server(settings, auto_migrate=False)) as client:
        assert "get_history" not in {t.name for t in (await client.list_tools()).tools}
        history = await ok(client, "get_history", {"label": "Person", "merge_keys": {"name": "Nobody"}})
        assert history["changes"] == []
    agents = AgentsFile.load(tmp_path / "agents.json")
    agents.add("reader", READER)
    agents.save()
    reader = settings.model_copy(update={"agents_file": agents.path, "agent": "reader"})
    async with Client(build_server(reader, auto_migrate=False)) as client:
        denied = await rejected(client, "resolve_conflict", {"conflict_id": "k1", "pick": "current"})
        assert denied["error_code"] == "PERMISSION_DENIED"


async def test_a_grant_naming_a_toolset_lists_it_to_that_agent_and_allows_its_tools(
    settings: Settings, tmp_path: Path
) -> None:
    agents = AgentsFile.load(tmp_path / "agents.toml")
    agents.add("historian", Grant(tools=("read", "history")))
    agents.add("reader", READER)
    agents.save()
    server = build_server(settings.model_copy(update={"agents_file": agents.path}), auto_migrate=False)
    reads = {"search_nodes", "open_nodes", "read_graph", "get_schema"}
    for agent, listed in (("historian", reads | HISTORY), ("reader", reads)):
        info = Implementation(name=agent, version="1")  # over stdio and in process the client's name is the agent
        async with Client(server, client_info=info) as client:
            assert {t.name for t in (await client.list_tools()).tools} == listed, agent
            answer = await client.call_tool("resolve_conflict", {"conflict_id": "k1", "pick": "current"})
            code = answer.structured_content["error_code"]
            # The historian may resolve (its set allows the write; there is no such conflict); the reader may not.
            assert code == ("INVALID_INPUT" if agent == "historian" else "PERMISSION_DENIED"), answer.structured_content


def test_a_name_that_is_no_toolset_stops_the_start_with_one_line(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")  # refused before any engine starts
    for extra_args, env in ((["--toolsets", "histroy"], {}), ([], {"WRITE_GATE_TOOLSETS": "histroy"})):
        done = subprocess.run(
            write_gate_argv("serve", "--no-migrate", *extra_args),
            env=settings_env(settings) | env,
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.startswith("error: WRITE_GATE_TOOLSETS: histroy is not a toolset (core, schema,")
        assert len(done.stderr.splitlines()) == 1


# --- discovery on demand ------------------------------------------------------------------------------------


async def test_enabling_a_toolset_changes_that_sessions_list_only_in_process(settings: Settings) -> None:
    server = build_server(settings.model_copy(update={"dynamic_toolsets": True}), auto_migrate=False)
    async with session(server) as first, session(server) as second:
        await enable_in_one_of_two(first, second)


async def test_enabling_a_toolset_changes_that_sessions_list_only_over_stdio(settings: Settings) -> None:
    dynamic = settings.model_copy(update={"dynamic_toolsets": True})
    async with session(stdio(dynamic)) as first, session(stdio(dynamic)) as second:
        await enable_in_one_of_two(first, second)


async def test_enabling_a_toolset_changes_that_sessions_list_only_over_http(settings: Settings, tmp_path: Path) -> None:
    """Two agents' sessions on one HTTP gate: the full agent's enabling reaches its session alone; a reader may
    not enable a set whose tools its grant does not allow."""
    agents = AgentsFile.load(tmp_path / "agents.toml")
    tokens = {"full": agents.add("full", FULL), "reader": agents.add("reader", READER)}
    agents.save()
    env = {"WRITE_GATE_AGENTS_FILE": str(agents.path)}
    with http_gate(settings, tmp_path / "gate.log", "--dynamic-toolsets", "--no-migrate", **env) as gate:

        def http(agent: str) -> Any:
            return create_mcp_http_client(headers={"Authorization": f"Bearer {tokens[agent]}"})

        async with http("full") as full_http, http("reader") as reader_http:
            async with (
                session(f"{gate.url}/mcp", full_http) as first,
                session(f"{gate.url}/mcp", full_http) as second,
            ):
                await enable_in_one_of_two(first, second)
            async with session(f"{gate.url}/mcp", reader_http) as reader:
                denied = await rejected(reader.client, "enable_toolset", {"toolset": "quarantine"})
                assert denied["error_code"] == "PERMISSION_DENIED" and denied["details"] == {"toolset": "quarantine"}
                assert reader.changes == 0


async def test_what_may_not_be_enabled_is_refused_with_a_structured_rejection(
    settings: Settings, tmp_path: Path
) -> None:
    agents = AgentsFile.load(tmp_path / "agents.toml")
    agents.add("reader", READER)
    agents.save()
    dynamic = settings.model_copy(update={"dynamic_toolsets": True, "agents_file": agents.path, "agent": "reader"})
    async with session(build_server(dynamic, profile="memory", auto_migrate=False)) as reader:
        for name in ("nope", "schema"):  # no toolset at all; none of the memory profile's
            unknown = await rejected(reader.client, "enable_toolset", {"toolset": name})
            assert unknown["error_code"] == "INVALID_INPUT" and unknown["details"]["field"] == "toolset"
            assert "schema" not in unknown["details"]["toolsets"] and "history" in unknown["details"]["toolsets"]
        for name in ("quarantine", "interchange"):  # admin tools only: a reader's grant allows none of them
            denied = await rejected(reader.client, "enable_toolset", {"toolset": name})
            assert denied["error_code"] == "PERMISSION_DENIED"
        # list_toolsets offers what the grant allows, each set with the tools this agent may call.
        offered = {ts["name"]: ts["tools"] for ts in (await ok(reader.client, "list_toolsets", {}))["toolsets"]}
        assert "quarantine" not in offered and "typed" not in offered
        assert offered["history"] == ["get_history", "list_conflicts"]  # not resolve_conflict, a write
        assert (await ok(reader.client, "enable_toolset", {"toolset": "history"}))["tools"] == offered["history"]
        assert reader.changes == 1
        assert await reader.names() == {"read_graph", "search_nodes", "open_nodes"} | DISCOVERY_TOOLS | {
            "get_history",
            "list_conflicts",
        }


async def test_a_connection_without_a_session_is_told_so(settings: Settings) -> None:
    """The 2026-07-28 protocol has no sessions: each request stands alone, so there is nothing to enable a set in."""
    async with Client(
        build_server(settings.model_copy(update={"dynamic_toolsets": True}), auto_migrate=False)
    ) as client:
        assert client.protocol_version == "2026-07-28"
        refused = await rejected(client, "enable_toolset", {"toolset": "history"})
        assert refused["error_code"] == "INVALID_INPUT" and refused["details"]["reason"] == "no_session"
        assert "history" not in {t.name for t in (await client.list_tools()).tools}

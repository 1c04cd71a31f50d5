"""`subscriptions/listen`, the 2026-07-28 protocol's change notifications, through the SDK's own client in its default
mode (which speaks that protocol to the gate) on every engine: a stream on a change area hears writes there, by
its own gate and by another, under the URI as the client wrote it, and none outside; a stream on the tool list
hears a registry change; the capabilities say so; a URI that is no change resource, or an agent that may not
read, is refused before the stream opens; a stream hears its own space only."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated, ServerEvent, ToolsListChanged

from tests.conftest import MATRIX_SCHEMAS, ok, open_client, settings_env, write_gate_argv
from tests.e2e.http_process import agents_command, http_gate, mcp_client
from tests.e2e.test_change_feed import ALL, ORG_AREA, PERSON_AREA, org, person
from tests.e2e.test_spaces import RPG, ada, load_registry, spaced
from write_gate.access.agents import AgentRecord, AgentsFile, hash_token
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources
from write_gate.surface.server import build_server

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def modern(settings: Settings, transport: str = "in_process") -> AsyncIterator[Client]:
    """The SDK's client in its default mode: it finds the gate speaks 2026-07-28 and uses it."""
    if transport == "stdio":
        command, *args = write_gate_argv("serve", "--no-migrate")
        server: Any = StdioServerParameters(command=command, args=args, env=settings_env(settings))
    else:
        server = build_server(settings, auto_migrate=False)
    async with Client(server, read_timeout_seconds=60) as client:
        assert client.protocol_version == "2026-07-28"
        yield client


async def next_event(stream: Any) -> ServerEvent:
    with anyio.fail_after(30):
        return await anext(stream)


async def nothing_more(stream: Any) -> bool:
    """No event is waiting on `stream` (an event published with another stream's was delivered with it)."""
    with anyio.move_on_after(0.5):
        await anext(stream)
        return False
    return True


@pytest.mark.parametrize("transport", ["in_process", "stdio"])
async def test_a_stream_hears_writes_in_its_area_under_its_uri_and_none_outside(
    settings: Settings, matrix_graph: GraphBackend, transport: str
) -> None:
    async with modern(settings, transport) as client, open_client(settings, "in_process") as other_gate:
        caps = client.server_capabilities
        assert caps.tools.list_changed is True
        assert caps.resources.subscribe is True and caps.resources.list_changed is False
        drifted = "write-gate://changes/person"  # a drifted label: resolved, and heard under the URI as written
        async with (
            client.listen(resource_subscriptions=[drifted]) as people,
            client.listen(resource_subscriptions=[ALL], prompts_list_changed=True) as everything,
        ):
            assert people.honored.resource_subscriptions == [drifted] and not people.honored.tools_list_changed
            assert everything.honored.prompts_list_changed is None  # the gate has no prompts to announce
            await ok(other_gate, "write_node", org("Acme"))  # another gate's write: found by the change watcher
            assert await next_event(everything) == ResourceUpdated(uri=ALL)
            assert await nothing_more(people)  # published with the one above: it was not for this area
            await ok(client, "write_node", person("Ada"))  # its own gate's write
            assert await next_event(people) == ResourceUpdated(uri=drifted)
            assert await next_event(everything) == ResourceUpdated(uri=ALL)


async def test_a_stream_hears_the_tool_list_change_when_the_registry_does(
    settings: Settings, graph: GraphBackend
) -> None:
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS]))
    typed = settings.model_copy(update={"toolsets": "typed"})  # the generated tools listed
    async with modern(typed) as client, client.listen(tools_list_changed=True) as tools:
        assert tools.honored.tools_list_changed is True
        await load_into_graph(graph, read_sources([RPG / "npc.schema.json", RPG / "location.schema.json"]))
        await ok(client, "refresh_schema_cache", {})
        assert await next_event(tools) == ToolsListChanged()
        assert "add_npc" in {tool.name for tool in (await client.list_tools()).tools}


async def test_what_may_not_be_watched_is_refused_before_the_stream_opens(
    settings: Settings, matrix_graph: GraphBackend, tmp_path: Path
) -> None:
    async with modern(settings) as client:
        with pytest.raises(MCPError) as other:
            async with client.listen(resource_subscriptions=["write-gate://schema"]):
                pass
        assert other.value.error.code == -32602
        with pytest.raises(MCPError) as unknown:
            async with client.listen(resource_subscriptions=[PERSON_AREA, "write-gate://changes/no such label"]):
                pass
        assert unknown.value.error.code == -32002
    scribe_record = AgentRecord(token_sha256=hash_token("t"), tools=("write",))
    agents = AgentsFile(tmp_path / "agents.toml", {"scribe": scribe_record})
    agents.save()
    scribe = settings.model_copy(update={"agents_file": agents.path, "agent": "scribe"})
    async with modern(scribe) as client:
        with pytest.raises(MCPError) as refused:
            async with client.listen(resource_subscriptions=[ORG_AREA]):
                pass
        assert refused.value.error.data["error_code"] == "PERMISSION_DENIED"
        async with client.listen(tools_list_changed=True) as tools:  # the tool list is every agent's to hear
            assert tools.honored.tools_list_changed is True


async def test_over_http_a_stream_hears_its_own_space_only(settings: Settings, tmp_path: Path) -> None:
    """One server, two teams' agents listening to every change (each in its space) and carol writing in both:
    each hears its own space's write only (both spaces' watchers run, so this fails if events ignored spaces)."""
    fleet = spaced(settings, tmp_path)
    await load_registry(fleet, "team_a")  # one registry, the default space's, for both
    agents = tmp_path / "tokens.toml"
    fleet = fleet.model_copy(update={"agents_file": agents, "change_settle_seconds": 0})
    tokens = {
        name: agents_command(fleet, "add", name, "--spaces", *spaces, "--file", str(agents))
        for name, spaces in (("alice", ["team_a"]), ("bob", ["team_b"]), ("carol", ["team_a", "team_b"]))
    }
    with http_gate(fleet, tmp_path / "gate.log") as gate:
        async with (
            mcp_client(gate.url, tokens["alice"]) as alice,
            mcp_client(gate.url, tokens["bob"]) as bob,
            mcp_client(gate.url, tokens["carol"]) as carol,
            alice.listen(resource_subscriptions=[ALL]) as heard_by_alice,
            bob.listen(resource_subscriptions=[ALL]) as heard_by_bob,
        ):
            assert alice.protocol_version == "2026-07-28"
            await ok(carol, "write_node", ada("b", space="team_b"))
            assert await next_event(heard_by_bob) == ResourceUpdated(uri=ALL)
            assert await nothing_more(heard_by_alice)
            await ok(carol, "write_node", ada("a", space="team_a"))
            assert await next_event(heard_by_alice) == ResourceUpdated(uri=ALL)
            assert await nothing_more(heard_by_bob)

"""A change subscription or listen stream opened while its agent could read the feed stops when the agents file
takes that away (issue 26, item 4), over stdio and streamable HTTP: the next change it would have heard ends the
listen stream (its result is its last frame) and drops the subscription (the log says so), and neither hears
that change. Before, both kept delivering to an agent that could no longer call changes_since."""

import json
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.subscriptions import ResourceUpdated

from tests.conftest import MATRIX_SCHEMAS, ok, settings_env, write_gate_argv
from tests.e2e.http_process import http_gate, mcp_client
from tests.e2e.test_change_feed import PERSON_AREA, Heard, person
from write_gate.access.agents import AgentRecord, AgentsFile, Grant
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources

# resources/subscribe is the handshake-era protocol's; the SDK warns it is gone from 2026-07-28 on.
pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

READS = Grant(tools=("read", "write"))
REVOKED = {"tools": ["write"]}  # writes still, reads (changes_since among them) no more
REVOKED_EVENT = '"event": "change_watch_revoked"'


def agents_file(path: Path) -> tuple[Path, str]:
    agents = AgentsFile(path, {})
    token = agents.add("watcher", READS)
    agents.save()
    return path, token


def revoke(path: Path) -> None:
    """Take the watcher's reads away, as an operator editing the file would (its token stays)."""
    agents = AgentsFile.load(path)
    record = agents.agents["watcher"]
    agents.agents["watcher"] = AgentRecord.model_validate({**record.model_dump(), **REVOKED})
    agents.save()


async def logged(log: Path, needle: str) -> None:
    """Until the server's log holds `needle` (a hang is a failure, bounded to a minute)."""
    with anyio.fail_after(60):
        while needle not in log.read_text(encoding="utf-8", errors="replace"):
            await anyio.sleep(0.05)


async def first_of(**waits: Awaitable[Any]) -> str:
    """The name of the wait that finished first; the others are cancelled."""
    finished: list[str] = []
    async with anyio.create_task_group() as tasks:

        async def wait(name: str, awaitable: Awaitable[Any]) -> None:
            await awaitable
            finished.append(name)
            tasks.cancel_scope.cancel()

        for name, awaitable in waits.items():
            tasks.start_soon(wait, name, awaitable)
    return finished[0]


async def ended(stream: Any) -> bool:
    """True when the stream ends gracefully before any further event (a hang is a failure)."""
    with anyio.fail_after(60):
        try:
            event = await anext(stream)
        except StopAsyncIteration:
            return True
    assert event == ResourceUpdated(uri=PERSON_AREA)  # what it heard instead of ending
    return False


@pytest.fixture
async def watched(settings: Settings, graph: GraphBackend, tmp_path: Path) -> tuple[Settings, str]:
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS]))
    path, token = agents_file(tmp_path / "agents.toml")
    return settings.model_copy(update={"agents_file": path, "agent": "watcher"}), token


def serve(settings: Settings) -> StdioServerParameters:
    command, *args = write_gate_argv("serve", "--no-migrate")
    return StdioServerParameters(command=command, args=args, env=settings_env(settings))


async def test_over_stdio_a_subscription_stops_when_the_grant_loses_its_reads(
    watched: tuple[Settings, str], tmp_path: Path
) -> None:
    settings, _ = watched
    heard, log = Heard(), tmp_path / "gate.log"
    with log.open("w") as errlog:
        async with Client(
            stdio_client(serve(settings), errlog=errlog), mode="legacy", message_handler=heard, read_timeout_seconds=60
        ) as client:
            await client.subscribe_resource(PERSON_AREA)
            await ok(client, "write_node", person("Ada"))
            assert await heard.until(1) == [PERSON_AREA]
            revoke(settings.agents_file)
            await ok(client, "write_node", person("Bob"))  # its own gate's write: the change it would hear
            assert await first_of(notified=heard.until(2), revoked=logged(log, REVOKED_EVENT)) == "revoked"
    assert heard.uris == [PERSON_AREA]


async def test_over_stdio_a_listen_stream_ends_when_the_grant_loses_its_reads(watched: tuple[Settings, str]) -> None:
    settings, _ = watched
    async with Client(serve(settings), read_timeout_seconds=60) as client:
        assert client.protocol_version == "2026-07-28"
        async with client.listen(resource_subscriptions=[PERSON_AREA]) as stream:
            await ok(client, "write_node", person("Ada"))
            assert await anext(stream) == ResourceUpdated(uri=PERSON_AREA)
            revoke(settings.agents_file)
            await ok(client, "write_node", person("Bob"))
            assert await ended(stream)


async def test_over_http_a_subscription_and_a_listen_stream_stop_when_the_grant_loses_its_reads(
    watched: tuple[Settings, str], tmp_path: Path
) -> None:
    settings, token = watched
    heard = Heard()
    env = {"WRITE_GATE_AGENTS_FILE": str(settings.agents_file), "WRITE_GATE_CHANGE_SETTLE_SECONDS": "0"}
    with http_gate(settings, tmp_path / "gate.log", **env) as gate:
        async with (
            create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http,
            Client(
                streamable_http_client(f"{gate.url}/mcp", http_client=http), mode="legacy", message_handler=heard
            ) as subscriber,
            mcp_client(gate.url, token) as client,
            client.listen(resource_subscriptions=[PERSON_AREA]) as stream,
        ):
            await subscriber.subscribe_resource(PERSON_AREA)
            await ok(client, "write_node", person("Ada"))
            assert await anext(stream) == ResourceUpdated(uri=PERSON_AREA)
            assert await heard.until(1) == [PERSON_AREA]
            revoke(settings.agents_file)
            await ok(client, "write_node", person("Bob"))
            assert await ended(stream)
            outcome = await first_of(notified=heard.until(2), revoked=logged(gate.log, REVOKED_EVENT))
            assert outcome == "revoked" and heard.uris == [PERSON_AREA]
            logged_lines = [json.loads(line) for line in gate.log.read_text().splitlines() if REVOKED_EVENT in line]
            assert {line["uri"] for line in logged_lines} == {PERSON_AREA}

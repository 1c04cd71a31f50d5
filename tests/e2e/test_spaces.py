"""Spaces (issue 15, item 3): one server, several isolated graphs in one engine, chosen by the agent's grant. Two
teams write the same names and labels and see nothing of each other; a grant with both spaces reads each by
choice; a space the grant does not list is refused; the registry is shared or per space. Through a real MCP client
on every engine tier (a graph per space on FalkorDB, a database per space on the Bolt tier)."""

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from tests.conftest import (
    COMPOSITE_SCHEMAS,
    MATRIX_SCHEMAS,
    CommandRun,
    ok,
    open_client,
    rejected,
    run_write_gate,
    settings_env,
)
from tests.e2e.http_process import agents_command, http_gate, mcp_client, request
from tests.e2e.test_change_feed import ALL, Heard, subscriber
from write_gate.core.cypher.statement import Statement
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import Settings
from write_gate.store.bundled import bundled
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

RPG = bundled("schemas") / "examples" / "rpg"  # its labels have typed tools (add_location)

AGENTS = """
[agents.alice]
token_sha256 = "{hash}"
spaces = ["team_a"]

[agents.bob]
token_sha256 = "{hash}"
spaces = ["team_b"]

[agents.carol]
token_sha256 = "{hash}"
spaces = ["team_a", "team_b"]

[agents.dave]
token_sha256 = "{hash}"
""".replace("{hash}", "0" * 64)


def spaced(settings: Settings, tmp_path: Path, *, shared: bool = True) -> Settings:
    agents = tmp_path / "agents.toml"
    agents.write_text(AGENTS)
    return settings.model_copy(
        update={
            "spaces": ["team_a", "team_b"],
            "default_space": "team_a",
            "shared_registry": shared,
            "agents_file": agents,
        }
    )


async def load_registry(settings: Settings, space: str) -> None:
    backend = await open_backend(settings.for_space(space))
    try:
        await load_into_graph(backend, read_sources([RPG, MATRIX_SCHEMAS]))
    finally:
        await backend.close()


async def space_nodes(settings: Settings, space: str, label: str = "Person") -> list[dict[str, Any]]:
    """What the space's own graph holds, read past the gate."""
    backend = await open_backend(settings.for_space(space))
    try:
        rows = await backend.read(Statement(f"MATCH (n:{label}) RETURN n.name AS name, n.team AS team"))
    finally:
        await backend.close()
    return rows


@asynccontextmanager
async def as_agent(settings: Settings, agent: str, transport: str = "in_process") -> AsyncIterator[Client]:
    async with open_client(settings.model_copy(update={"agent": agent}), transport) as client:
        yield client


@pytest.fixture
async def fleet(settings: Settings, tmp_path: Path) -> Settings:
    """Two teams' spaces, one registry (the default space's) for both."""
    fleet = spaced(settings, tmp_path)
    await load_registry(fleet, "team_a")
    return fleet


def ada(team: str, **extra: Any) -> dict[str, Any]:
    return {
        "label": "Person",
        "merge_keys": {"name": "Ada"},
        "properties": {"team": team},
        "source": team,
        "extraction_method": "manual",
        "reliability": 0.9,
        **extra,
    }


@pytest.mark.every_transport
async def test_two_spaces_see_nothing_of_each_other(fleet: Settings, transport: str) -> None:
    async with as_agent(fleet, "alice", transport) as alice, as_agent(fleet, "bob", transport) as bob:
        await ok(alice, "write_node", ada("a"))
        await ok(bob, "write_node", ada("b"))
        await ok(bob, "write_node", {**ada("b"), "merge_keys": {"name": "Bea"}})
        for client, team, names in ((alice, "a", ["Ada"]), (bob, "b", ["Ada", "Bea"])):
            graph = await ok(client, "read_graph", {})
            assert sorted(e["name"] for e in graph["entities"]) == names
            assert {e["properties"]["team"] for e in graph["entities"]} == {team}
            found = await ok(client, "search_nodes", {"query": "Bea"})
            assert [e["name"] for e in found["entities"]] == (["Bea"] if team == "b" else [])
            [opened] = (await ok(client, "open_nodes", {"names": ["Ada"]}))["entities"]
            assert opened["properties"]["team"] == team and opened["properties"]["written_by"] == (
                "alice" if team == "a" else "bob"
            )
            stats = await ok(client, "get_graph_stats", {})
            assert stats["totalEntities"] == len(names) and stats["entitiesByAgent"] == {
                ("alice" if team == "a" else "bob"): len(names)
            }
            exported = await ok(client, "export_graph", {"format": "json"})
            assert exported["entities"] == len(names)
            ref = {"label": "Person", "merge_keys": {"name": "Ada"}}
            changes = (await ok(client, "get_history", ref))["changes"]
            assert {(c["property"], c["after"], c["agent"]) for c in changes} == {
                ("name", "Ada", "alice" if team == "a" else "bob"),
                ("team", team, "alice" if team == "a" else "bob"),
            }
    # What is stored: each space's graph (or database) holds its own team's writes only.
    assert await space_nodes(fleet, "team_a") == [{"name": "Ada", "team": "a"}]
    assert sorted(r["name"] for r in await space_nodes(fleet, "team_b")) == ["Ada", "Bea"]


async def test_a_grant_with_both_spaces_reads_each_by_choice_and_works_in_its_first_by_default(
    fleet: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="write_gate.decisions")
    async with as_agent(fleet.model_copy(update={"toolsets": "all"}), "carol") as carol:  # every tool listed
        await ok(carol, "write_node", ada("a"))
        await ok(carol, "write_node", {**ada("b"), "space": "team_b"})
        # Each decision's log line says the space it worked in.
        logged = [(r.agent, r.tool, r.space) for r in caplog.records if getattr(r, "event", None) == "tool_call"]
        assert logged == [("carol", "write_node", "team_a"), ("carol", "write_node", "team_b")]
        for space, team in (("team_a", "a"), ("team_b", "b")):
            [entity] = (await ok(carol, "read_graph", {"space": space}))["entities"]
            assert entity["properties"]["team"] == team
        [default] = (await ok(carol, "read_graph", {}))["entities"]
        assert default["properties"]["team"] == "a"
        tools = (await carol.list_tools()).tools
        assert all("space" in tool.input_schema["properties"] for tool in tools)
    async with as_agent(fleet, "alice") as alice:  # one space, no choice: no `space` argument offered
        tools = (await alice.list_tools()).tools
        assert not any("space" in tool.input_schema.get("properties", {}) for tool in tools)
    assert await space_nodes(fleet, "team_b") == [{"name": "Ada", "team": "b"}]


async def test_a_space_the_grant_does_not_list_is_refused_and_nothing_is_written_there(fleet: Settings) -> None:
    async with as_agent(fleet, "alice") as alice, as_agent(fleet, "dave") as dave:
        for tool, args in (("write_node", ada("a")), ("read_graph", {})):
            refused = await rejected(alice, tool, {**args, "space": "team_b"})
            assert refused["error_code"] == "SPACE_NOT_GRANTED" and refused["details"] == {"space": "team_b"}
        unknown = await rejected(alice, "read_graph", {"space": "team_z"})
        assert unknown["error_code"] == "SPACE_NOT_GRANTED"  # an unserved space answers as an ungranted one
        odd = await rejected(alice, "read_graph", {"space": "Team B; MATCH (n) DETACH DELETE n"})
        assert odd["error_code"] == "INVALID_INPUT" and "MATCH" not in str(odd)  # never echoed
        # A grant that names no space works in the server's default space, and only there.
        await ok(dave, "write_node", ada("d"))
        assert (await rejected(dave, "read_graph", {"space": "team_b"}))["error_code"] == "SPACE_NOT_GRANTED"
    assert await space_nodes(fleet, "team_b") == []
    assert await space_nodes(fleet, "team_a") == [{"name": "Ada", "team": "d"}]


async def test_a_per_space_registry_knows_a_label_only_in_the_space_it_was_loaded_into(
    settings: Settings, tmp_path: Path
) -> None:
    fleet = spaced(settings, tmp_path, shared=False)
    await load_registry(fleet, "team_a")
    async with as_agent(fleet, "carol") as carol:
        await ok(carol, "write_node", ada("a"))
        refused = await rejected(carol, "write_node", {**ada("b"), "space": "team_b"})
        assert refused["error_code"] == "SCHEMA_UNKNOWN_LABEL"
        assert "Person" not in {e["name"] for e in (await ok(carol, "get_schema", {"space": "team_b"}))["node_labels"]}
        await load_registry(fleet, "team_b")  # team_b's own registry now knows Person too
        await ok(carol, "refresh_schema_cache", {"space": "team_b"})
        await ok(carol, "write_node", {**ada("b"), "space": "team_b"})
    assert await space_nodes(fleet, "team_b") == [{"name": "Ada", "team": "b"}]


async def test_a_shared_registry_loaded_once_serves_every_space(fleet: Settings) -> None:
    async with as_agent(fleet.model_copy(update={"toolsets": "typed"}), "bob") as bob:  # typed tools listed
        assert "Person" in {e["name"] for e in (await ok(bob, "get_schema", {}))["node_labels"]}
        await ok(bob, "write_node", ada("b"))
        tools = {tool.name for tool in (await bob.list_tools()).tools}
        assert "add_location" in tools  # the typed tools of the shared registry, in bob's space
        prov = {"source": "b", "extraction_method": "manual", "reliability": 0.9}
        await ok(bob, "add_location", {"location": {"name": "Rivendell"}, **prov})
        # The resources read the agent's own space too.
        stats = json.loads((await bob.read_resource("write-gate://stats")).contents[0].text)
        assert stats["totalEntities"] == 2
    async with as_agent(fleet, "alice") as alice:
        assert json.loads((await alice.read_resource("write-gate://stats")).contents[0].text)["totalEntities"] == 0
    assert await space_nodes(fleet, "team_b") == [{"name": "Ada", "team": "b"}]
    assert await space_nodes(fleet, "team_a") == []
    assert await space_nodes(fleet, "team_b", "Location") == [{"name": "Rivendell", "team": None}]


# --- the commands, and a fleet over HTTP ---------------------------------------------------------------------


def run(settings: Settings, *args: str) -> CommandRun:
    """`write-gate ARGS`, in process."""
    return run_write_gate(*args, env=settings_env(settings))


async def registry_names(settings: Settings, space: str) -> set[str]:
    backend = await open_backend(settings.for_space(space))
    try:
        return {row["name"] for row in await backend.read(Statement("MATCH (s:Schema) RETURN s.name AS name"))}
    finally:
        await backend.close()


@pytest.mark.one_tier
async def test_the_graph_commands_work_in_the_space_they_name(settings: Settings, tmp_path: Path) -> None:
    """schema load, import, export and backup with --space, each on that space's graph only (per-space registry)."""
    fleet = spaced(settings, tmp_path, shared=False)
    loaded = run(fleet, "schema", "load", "--space", "team_b", str(MATRIX_SCHEMAS))
    assert loaded.returncode == 0, loaded.stderr
    assert "Person" in await registry_names(fleet, "team_b") and "Person" not in await registry_names(fleet, "team_a")
    memory = tmp_path / "memory.jsonl"
    memory.write_text('{"type": "entity", "name": "Cy", "entityType": "Person", "observations": []}\n')
    imported = run(fleet, "import", "--space", "team_b", str(memory), "--quiet")
    assert imported.returncode == 0, imported.stderr
    assert await space_nodes(fleet, "team_b") == [{"name": "Cy", "team": None}] and not await space_nodes(
        fleet, "team_a"
    )
    for space, count in (("team_b", 1), ("team_a", 0)):
        exported = run(fleet, "export", "--space", space, "--format", "json")
        assert exported.returncode == 0, exported.stderr
        assert [e["name"] for e in json.loads(exported.stdout)["entities"]] == ["Cy"] * count
    backup = tmp_path / "b.jsonl"
    assert run(fleet, "backup", "--space", "team_b", str(backup)).returncode == 0
    assert '"Cy"' in backup.read_text()
    unserved = run(fleet, "export", "--space", "team_z")
    assert unserved.returncode == 2 and "team_z: not a space this gate serves" in unserved.stderr


@pytest.mark.one_tier
async def test_a_shared_registry_is_loaded_into_the_default_space_whichever_is_named(fleet: Settings) -> None:
    loaded = run(fleet, "schema", "load", "--space", "team_b", str(COMPOSITE_SCHEMAS))
    assert loaded.returncode == 0, loaded.stderr
    assert "City" in await registry_names(fleet, "team_a") and "City" not in await registry_names(fleet, "team_b")


@pytest.mark.one_tier
async def test_a_fleet_over_http_works_in_the_spaces_its_tokens_grant(fleet: Settings, tmp_path: Path) -> None:
    """Real tokens from `agents add --spaces`; /health reports each space; each team's writes stay in its space."""
    agents = tmp_path / "tokens.toml"
    fleet = fleet.model_copy(update={"agents_file": agents})
    tokens = {
        name: agents_command(fleet, "add", name, "--spaces", *spaces, "--file", str(agents))
        for name, spaces in (("alice", ["team_a"]), ("bob", ["team_b"]))
    }
    with http_gate(fleet, tmp_path / "gate.log") as gate:
        status, _, body = request(gate.url, "GET", "/health")
        health = json.loads(body)
        assert status == 200 and set(health["spaces"]) == {"team_a", "team_b"}
        assert all(s["engine"] == "reachable" and s["registry"]["loaded"] for s in health["spaces"].values())
        async with mcp_client(gate.url, tokens["alice"]) as alice, mcp_client(gate.url, tokens["bob"]) as bob:
            await ok(alice, "write_node", ada("a"))
            assert (await ok(bob, "read_graph", {}))["entities"] == []
            refused = await rejected(bob, "read_graph", {"space": "team_a"})
            assert refused["error_code"] == "SPACE_NOT_GRANTED"
    assert await space_nodes(fleet, "team_a") == [{"name": "Ada", "team": "a"}]
    assert await space_nodes(fleet, "team_b") == []


async def test_a_subscriber_hears_only_its_own_spaces_writes_and_changes_since_reads_only_its_space(
    fleet: Settings,
) -> None:
    """The change feed per space: alice (team_a) subscribed to every change hears carol's write in team_a and
    nothing of bob's in team_b, reads only team_a's in the resource and in changes_since."""
    fleet = fleet.model_copy(update={"change_poll_seconds": 0.05, "change_settle_seconds": 0})
    heard = Heard()
    async with (
        subscriber(fleet.model_copy(update={"agent": "alice"}), heard) as alice,
        as_agent(fleet, "bob") as bob,
        as_agent(fleet, "carol") as carol,
    ):
        await alice.subscribe_resource(ALL)
        await ok(bob, "write_node", ada("team_b"))  # another space: alice's gate never hears of it
        await anyio.sleep(0.3)  # several of the watchers' polls
        assert heard.uris == []
        await ok(carol, "write_node", {**ada("team_a"), "space": "team_a"})
        assert await heard.until(1) == [ALL]
        read = await alice.read_resource(ALL)
        latest = types.TextResourceContents.model_validate(read.contents[0].model_dump()).text
        assert "team_a" in latest and "team_b" not in latest
        changes = (await ok(alice, "changes_since", {}))["changes"]
        assert [c["agent"] for c in changes] == ["carol"]
        bobs = (await ok(bob, "changes_since", {}))["changes"]
        assert [c["agent"] for c in bobs] == ["bob"]
        await anyio.sleep(0.3)  # several polls again
        assert heard.uris == [ALL]  # still one: bob's write was never told to alice

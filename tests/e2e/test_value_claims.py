"""Provenance per value and created_at (issue 12, items 2 and 6), through real MCP client sessions on every
engine tier: each value keeps who wrote it, from where, how, how sure and when, on every write path; reads
show the claims only when asked, and filter by them."""

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from tests.conftest import MATRIX_SCHEMAS, ok, open_client
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.bundled import bundled
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

RPG = bundled("schemas") / "examples" / "rpg"
API = {"source": "api", "extraction_method": "manual", "reliability": 1.0}
LLM = {"source": "llm", "extraction_method": "llm", "reliability": 0.1}


@pytest.fixture
async def loaded(settings: Settings, graph: GraphBackend) -> Settings:
    await load_into_graph(graph, read_sources([RPG, MATRIX_SCHEMAS]))
    return settings


@pytest.fixture
async def api_bot(loaded: Settings) -> AsyncIterator[Client]:
    async with open_client(loaded.model_copy(update={"agent": "api-bot"}), "in_process") as client:
        yield client


@pytest.fixture
async def llm_bot(loaded: Settings) -> AsyncIterator[Client]:
    async with open_client(loaded.model_copy(update={"agent": "llm-bot"}), "in_process") as client:
        yield client


async def node(graph: GraphBackend, label: str, name: str) -> dict[str, Any]:
    [row] = await graph.read(Statement(f"MATCH (n:`{label}`) WHERE n.name = $name RETURN n", {"name": name}))
    return row["n"]


def person(name: str, properties: dict[str, Any], prov: dict[str, Any]) -> dict[str, Any]:
    return {"label": "Person", "merge_keys": {"name": name}, "properties": properties, **prov}


async def test_each_value_keeps_its_own_writer_and_created_at_is_set_once(
    api_bot: Client, llm_bot: Client, graph: GraphBackend
) -> None:
    written = await ok(api_bot, "write_node", person("Alice", {"age": 36}, API))
    first = await node(graph, "Person", "Alice")
    await ok(llm_bot, "write_node", person("Alice", {"nickname": "Al"}, LLM))
    alice = await node(graph, "Person", "Alice")
    # The node's stamp is the last write's; each value's claim is its own writer's.
    assert alice["written_by"] == "llm-bot" and alice["source"] == "llm"
    assert alice["_p_age"] == ["api-bot", "api", "manual", written["confidence"], first["last_updated"]]
    assert alice["_p_nickname"][:3] == ["llm-bot", "llm", "llm"]
    assert alice["_p_name"][:2] == ["api-bot", "api"]  # a merge key is claimed by whoever named the node first
    assert alice["created_at"] == first["created_at"] == first["last_updated"] <= alice["last_updated"]

    shown = await ok(api_bot, "open_nodes", {"names": ["Alice"], "provenance": {}})
    [entity] = shown["entities"]
    assert set(entity["provenance"]) == {"name", "age", "nickname"}
    assert entity["provenance"]["age"] == {
        "agent": "api-bot",
        "source": "api",
        "extraction_method": "manual",
        "confidence": written["confidence"],
        "at": first["last_updated"],
        "effective_confidence": written["confidence"],  # no half-life applies: the stored one
    }
    assert entity["provenance"]["nickname"]["agent"] == "llm-bot"
    assert entity["properties"]["created_at"] == first["created_at"]
    # By default the answer is the one it always was: no claims, no gate-owned properties.
    [plain] = (await ok(api_bot, "open_nodes", {"names": ["Alice"]}))["entities"]
    assert "provenance" not in plain and not any(k.startswith("_p_") for k in plain["properties"])


async def test_reads_filter_by_agent_source_confidence_and_time(
    api_bot: Client, llm_bot: Client, graph: GraphBackend
) -> None:
    await ok(api_bot, "write_node", person("Alice", {"age": 36}, API))
    await ok(api_bot, "write_node", person("Bob", {"age": 40}, API))
    await ok(llm_bot, "write_node", person("Alice", {"nickname": "Al"}, LLM))
    bob = await node(graph, "Person", "Bob")

    async def names(tool: str, args: dict[str, Any], **claims: Any) -> list[str]:
        answer = await ok(api_bot, tool, {**args, "provenance": claims})
        return sorted(e["name"] for e in answer["entities"])

    assert await names("read_graph", {}, agent="llm-bot") == ["Alice"]
    assert await names("read_graph", {}, agent="api-bot") == ["Alice", "Bob"]
    assert await names("search_nodes", {"query": "bob"}, source="llm") == []  # Bob has no llm value
    assert await names("search_nodes", {"query": "al"}, source="llm") == ["Alice"]
    assert await names("read_graph", {}, min_confidence=0.5) == ["Alice", "Bob"]
    assert await names("read_graph", {}, agent="llm-bot", min_confidence=0.5) == []  # one value must match all
    assert await names("open_nodes", {"names": ["Alice", "Bob"]}, agent="llm-bot") == ["Alice"]
    assert await names("read_graph", {}, since="2999-01-01T00:00:00Z") == []
    assert await names("read_graph", {}, since=bob["last_updated"]) == ["Alice", "Bob"]


async def test_relationships_batches_and_protected_names(api_bot: Client, llm_bot: Client, graph: GraphBackend) -> None:
    await ok(api_bot, "write_nodes", {"items": [person("Alice", {"age": 36}, API), person("Carol", {}, API)]})
    await ok(
        llm_bot,
        "write_relationship",
        {
            "type": "KNOWS",
            "from_label": "Person",
            "from_keys": {"name": "Alice"},
            "to_label": "Person",
            "to_keys": {"name": "Dave"},
            "properties": {"since": 2020},
            "endpoint_policy": "merge_endpoints",
            **LLM,
        },
    )
    alice, dave = await node(graph, "Person", "Alice"), await node(graph, "Person", "Dave")
    assert alice["_p_age"][0] == "api-bot" and alice["created_at"] == alice["_p_age"][4]
    assert dave["_p_name"][0] == "llm-bot" and dave["created_at"]  # a stub is created, and claimed, too
    [rel] = await graph.read(Statement("MATCH ()-[r:KNOWS]->() RETURN r"))
    assert rel["r"]["_p_since"][:2] == ["llm-bot", "llm"] and rel["r"]["created_at"] == rel["r"]["last_updated"]
    shown = await ok(api_bot, "read_graph", {"provenance": {}})
    [relation] = shown["relations"]
    assert relation["provenance"]["since"]["agent"] == "llm-bot" and "_p_since" not in relation["properties"]

    for bad in ({"_p_age": ["x"]}, {"created_at": "2020-01-01"}, {"Created_At": "x"}):
        result = await api_bot.call_tool("write_node", person("Alice", bad, API))
        assert result.is_error and result.structured_content["error_code"] == "SCHEMA_PROTECTED_FIELD"


async def test_typed_tools_and_the_memory_profile_stamp_each_value(
    api_bot: Client, loaded: Settings, graph: GraphBackend
) -> None:
    npc = {"npc": {"name": "Gandalf", "role": "Wizard", "status": "Active"}, **API}
    await ok(api_bot, "add_npc", npc)
    gandalf = await node(graph, "Npc", "Gandalf")
    assert gandalf["_p_role"][:2] == ["api-bot", "api"] and gandalf["created_at"]

    memory_settings = loaded.model_copy(update={"agent": "memory-bot", "memory_source": "notes"})
    async with open_client(memory_settings, "in_process", profile="memory") as memory:
        await ok(memory, "create_entities", {"entities": [{"name": "Eve", "entityType": "Person", "observations": []}]})
        await ok(memory, "add_observations", {"observations": [{"entityName": "Gandalf", "contents": ["grey"]}]})
        plain = await ok(memory, "open_nodes", {"names": ["Gandalf"]})
    eve, gandalf = await node(graph, "Person", "Eve"), await node(graph, "Npc", "Gandalf")
    assert eve["_p_name"][:2] == ["memory-bot", "notes"] and eve["created_at"]
    assert gandalf["_p_observations"][:2] == ["memory-bot", "notes"] and gandalf["_p_role"][0] == "api-bot"
    assert "provenance" not in plain["entities"][0]

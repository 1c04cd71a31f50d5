"""`importance` and `tags` keep their rules on every write path (issue 36, item 2): write_node, write_nodes, the
typed tools, the memory profile's create_entities and import_graph apply the one rule the knowledge tools keep
(core.knowledge): tags trimmed, lowercased, distinct and sorted; an importance that is not a number from 0 to 10
refused with INVALID_INPUT naming set_importance. So a graph written through the write tools exports and imports
again.
Through real MCP client sessions on every engine tier."""

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.conftest import TESTS, ok, open_client, rejected
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

KNOWLEDGE_SCHEMAS = TESTS / "schemas" / "knowledge"
PROV = {"source": "test", "extraction_method": "manual"}
FORGED_IMPORTANCE: list[Any] = [1000000, -1, 10.5, "forged", True, [5]]
FORGED_TAGS = ["Forged Tag", "UPPER", " upper "]


def node(name: str, **properties: Any) -> dict[str, Any]:
    return {"label": "Person", "merge_keys": {"name": name}, "properties": properties, **PROV}


@pytest.fixture
async def gate(settings: Settings, graph: GraphBackend) -> AsyncIterator[Client]:
    await load_into_graph(graph, read_sources([KNOWLEDGE_SCHEMAS]))
    async with open_client(settings, "in_process") as client:
        yield client


async def stored(client: Client, name: str) -> dict[str, Any]:
    """The entity's properties as a read shows them; {} when there is no such entity."""
    found = (await ok(client, "open_nodes", {"names": [name], "neighbors": False}))["entities"]
    return found[0]["properties"] if found else {}


def refused_for_importance(refusal: dict[str, Any]) -> None:
    assert refusal["error_code"] == "INVALID_INPUT", refusal
    assert refusal["details"]["field"] == "properties.importance", refusal
    assert "set_importance" in refusal["message"], refusal
    assert "1000000" not in json.dumps(refusal) and "forged" not in json.dumps(refusal)


async def test_write_node_normalises_tags_and_refuses_importance_outside_0_to_10(gate: Client) -> None:
    for bad in FORGED_IMPORTANCE:
        refused_for_importance(await rejected(gate, "write_node", node("Ada", importance=bad)))
    assert await stored(gate, "Ada") == {}
    await ok(gate, "write_node", node("Ada", importance=7, tags=FORGED_TAGS))
    props = await stored(gate, "Ada")
    assert (props["importance"], props["tags"]) == (7, ["forged tag", "upper"])
    for bad in ("forged", [1, 2], ["ok", "  "]):
        refusal = await rejected(gate, "write_node", node("Ada", tags=bad))
        assert refusal["error_code"] == "INVALID_INPUT", refusal
        assert refusal["details"]["field"].startswith("properties.tags"), refusal
    # The search filters see what the tools would have written.
    found = await ok(gate, "search_nodes", {"query": "ada", "tags": ["UPPER"], "minImportance": 7})
    assert [e["name"] for e in found["entities"]] == ["Ada"]


async def test_an_entry_that_declares_the_fields_keeps_its_type_and_the_range_still_holds(gate: Client) -> None:
    project = {"label": "Project", "merge_keys": {"name": "Orbit"}, "properties": {"owner": "x"}, **PROV}
    over = {**project, "properties": {"owner": "x", "importance": 11}}
    refused_for_importance(await rejected(gate, "write_node", over))
    await ok(gate, "write_node", {**project, "properties": {"owner": "x", "importance": 10}})
    # Ledger declares `tags` a string: its type holds, so a string is what it takes.
    await ok(
        gate, "write_node", {"label": "Ledger", "merge_keys": {"name": "Books"}, "properties": {"tags": "x"}, **PROV}
    )
    assert (await stored(gate, "Books"))["tags"] == "x"


async def test_write_nodes_applies_the_rule_to_each_item(gate: Client) -> None:
    items = [node("Ada", importance=1000000), node("Alan", tags=FORGED_TAGS, importance=3)]
    answer = await ok(gate, "write_nodes", {"items": items})
    first, second = answer["items"]
    assert (first["status"], first["error_code"]) == ("rejected", "INVALID_INPUT"), first
    assert "set_importance" in first["message"]
    assert second["status"] == "written", second
    assert await stored(gate, "Ada") == {}
    assert (await stored(gate, "Alan"))["tags"] == ["forged tag", "upper"]


async def test_the_typed_tools_apply_the_rule(settings: Settings, graph: GraphBackend, tmp_path: Path) -> None:
    gadget = {
        "name": "add_gadget",
        "description": "A gadget",
        "properties": {
            "name": {"type": "string", "description": "Its name", "required": True},
            "importance": {"type": "number", "description": "How much it matters"},
        },
        "additionalProperties": True,
    }
    (tmp_path / "gadget.schema.json").write_text(json.dumps(gadget))
    await load_into_graph(graph, read_sources([KNOWLEDGE_SCHEMAS, tmp_path]))
    async with open_client(settings.model_copy(update={"toolsets": "typed"}), "in_process") as client:
        refusal = await rejected(client, "add_gadget", {"gadget": {"name": "G", "importance": 1000000}, **PROV})
        assert refusal["error_code"] == "INVALID_INPUT", refusal
        assert "set_importance" in refusal["message"]
        await ok(client, "add_gadget", {"gadget": {"name": "G", "importance": 4, "tags": FORGED_TAGS}, **PROV})
        props = await stored(client, "G")
        assert (props["importance"], props["tags"]) == (4, ["forged tag", "upper"])
        refusal = await rejected(client, "update_gadget", {"gadget": {"name": "G", "tags": "one"}, **PROV})
        assert refusal["error_code"] == "INVALID_INPUT", refusal
        assert "add_tags" in refusal["message"]


async def test_the_memory_profile_writes_both_fields_under_the_rule(settings: Settings, graph: GraphBackend) -> None:
    """create_entities takes memory-mcp's tags and importance (seed 004's create flow) under the one rule."""
    await load_into_graph(graph, read_sources([KNOWLEDGE_SCHEMAS]))
    async with open_client(settings, "in_process", profile="memory") as memory:
        forged = {"name": "Ada", "entityType": "person", "observations": [], "importance": 1000000, "tags": ["X"]}
        refusal = await rejected(memory, "create_entities", {"entities": [forged]})
        assert refusal["error_code"] == "INVALID_INPUT" and "importance" in json.dumps(refusal["details"])
        await ok(memory, "create_entities", {"entities": [{**forged, "importance": 4, "tags": FORGED_TAGS}]})
        props = await stored(memory, "Ada")
        assert (props["importance"], props["tags"]) == (4, ["forged tag", "upper"])
        refusal = await rejected(memory, "set_importance", {"entityName": "Ada", "importance": 1000000})
        assert refusal["error_code"] == "INVALID_INPUT"


async def test_an_import_applies_the_rule_to_properties_too(gate: Client) -> None:
    lines = [
        {"type": "entity", "label": "Person", "keys": {"name": "Ada"}, "properties": {"importance": 1000000}},
        {"type": "entity", "label": "Person", "keys": {"name": "Alan"}, "properties": {"tags": FORGED_TAGS}},
    ]
    data = "\n".join(json.dumps(line) for line in lines)
    answer = await ok(gate, "import_graph", {"format": "jsonl", "data": data})
    assert answer["entitiesCreated"] == 1, answer
    [error] = answer["errors"]
    assert (error["line"], error["error_code"]) == (1, "INVALID_INPUT"), error
    assert "set_importance" in error["message"]
    assert await stored(gate, "Ada") == {}
    assert (await stored(gate, "Alan"))["tags"] == ["forged tag", "upper"]


async def test_a_graph_written_through_the_write_tools_exports_and_imports_again(gate: Client) -> None:
    await ok(gate, "write_node", node("Ada", importance=9, tags=FORGED_TAGS))
    await ok(gate, "write_nodes", {"items": [node("Alan", importance=0.5, tags=["CS"])]})
    for bad in (node("Eve", importance=1000000), node("Eve", importance="forged")):
        await rejected(gate, "write_node", bad)
    exported = (await ok(gate, "export_graph", {"format": "jsonl"}))["content"]
    again = await ok(gate, "import_graph", {"format": "jsonl", "data": exported, "mergeStrategy": "update"})
    assert (again["errors"], again["entitiesCreated"], again["entitiesUpdated"]) == ([], 0, 2), again
    found = await ok(gate, "search_nodes", {"query": "", "minImportance": 9, "neighbors": False})
    assert [e["name"] for e in found["entities"]] == ["Ada"]

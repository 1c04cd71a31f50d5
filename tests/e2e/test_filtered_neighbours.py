"""A filtered search answers only entities that pass its filter, neighbours included (issue 36, item 3), and a
saved search answers what search_nodes answers for the same arguments (item 4). Through real MCP client sessions
on every engine tier: memory-mcp's filters (tags, importance, archived) beside MemoryMesh's neighbour reads."""

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from tests.conftest import TESTS, ok, open_client
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

KNOWLEDGE_SCHEMAS = TESTS / "schemas" / "knowledge"
PROV = {"source": "test", "extraction_method": "manual"}
# Ada and the six people she knows: (name, importance, tags); Old is archived.
PEOPLE: list[tuple[str, float | None, list[str]]] = [
    ("Ada", 9, ["pioneer"]),
    ("Bob", 8, ["pioneer"]),
    ("Carl", 2, []),
    ("Dana", None, ["pioneer"]),
    ("Eve", 7, ["other"]),
    ("Finn", None, []),
    ("Old", 9, ["pioneer"]),
]


@pytest.fixture
async def gate(settings: Settings, graph: GraphBackend) -> AsyncIterator[Client]:
    await load_into_graph(graph, read_sources([KNOWLEDGE_SCHEMAS]))
    async with open_client(settings, "in_process") as client:
        for name, importance, tags in PEOPLE:
            props: dict[str, Any] = {"note": "first programmer"} if name == "Ada" else {}
            node = {"label": "Person", "merge_keys": {"name": name}, "properties": props, **PROV}
            await ok(client, "write_node", node)
            if importance is not None:
                await ok(client, "set_importance", {"entityName": name, "importance": importance})
            if tags:
                await ok(client, "add_tags", {"entityName": name, "tags": tags})
        link = {"type": "KNOWS", "from_label": "Person", "from_keys": {"name": "Ada"}, "to_label": "Person"}
        for name, _importance, _tags in PEOPLE[1:]:
            await ok(client, "write_relationship", {**link, "to_keys": {"name": name}, **PROV})
        await ok(client, "add_tags", {"entityName": "Old", "tags": ["stale"]})
        await ok(client, "archive_entities", {"tags": ["stale"]})
        yield client


def names(answer: dict[str, Any]) -> list[str]:
    return sorted(e["name"] for e in answer["entities"])


async def found(client: Client, **args: Any) -> list[str]:
    return names(await ok(client, "search_nodes", args))


async def test_a_filtered_search_answers_only_entities_that_pass_its_filter(gate: Client) -> None:
    assert await found(gate, query="", minImportance=7) == ["Ada", "Bob", "Eve"]
    assert await found(gate, query="", tags=["pioneer"]) == ["Ada", "Bob", "Dana"]
    assert await found(gate, query="", maxImportance=5) == ["Carl"]
    assert await found(gate, query="ada", minImportance=8) == ["Ada", "Bob"]  # Bob: a neighbour that passes
    assert await found(gate, query="", minImportance=7, includeArchived=True) == ["Ada", "Bob", "Eve", "Old"]
    # The relations touching the matches stay, naming the ends they do not list (as the official answer does).
    answer = await ok(gate, "search_nodes", {"query": "ada", "tags": ["pioneer"]})
    assert names(answer) == ["Ada", "Bob", "Dana"]
    assert sorted(r["to"] for r in answer["relations"]) == ["Bob", "Carl", "Dana", "Eve", "Finn"]


async def test_an_unfiltered_search_answers_every_neighbour_but_an_archived_one_unless_asked(gate: Client) -> None:
    everyone = ["Ada", "Bob", "Carl", "Dana", "Eve", "Finn"]
    assert await found(gate, query="ada") == everyone
    assert await found(gate, query="ada", includeArchived=True) == [*everyone, "Old"]
    assert await found(gate, query="ada", neighbors=False) == ["Ada"]
    # An empty tag list filters nothing, as memory-mcp reads it (a client that always sends `tags` still works).
    assert await found(gate, query="ada", tags=[]) == everyone
    ranked = await ok(gate, "search_nodes_ranked", {"query": "programmer", "tags": []})
    assert [hit["entity"]["name"] for hit in ranked["results"]] == ["Ada"]


@pytest.mark.parametrize("profile", ["gate", "memory"])
async def test_a_saved_search_answers_what_search_nodes_answers(settings: Settings, gate: Client, profile: str) -> None:
    async with open_client(settings, "in_process", profile) as client:
        for name, args in (
            ("basic", {"query": "ada"}),
            ("pioneers", {"query": "", "tags": ["pioneer"]}),
            ("important", {"query": "ada", "minImportance": 8, "maxImportance": 10}),
        ):
            await ok(client, "save_search", {"name": name, **args})
            run = await ok(client, "execute_saved_search", {"name": name})
            direct = await ok(client, "search_nodes", args)
            assert run["entities"] == direct["entities"], (profile, name)
            assert run["relations"] == direct["relations"], (profile, name)
        if profile == "gate":
            run = await ok(client, "execute_saved_search", {"name": "basic"})
            assert names(run) == ["Ada", "Bob", "Carl", "Dana", "Eve", "Finn"]

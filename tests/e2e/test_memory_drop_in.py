"""Memory-profile behaviours the drop-in table (docs/clients/memory-profile.md) states that the side-by-side
comparison with the official server (tests/official_memory) does not reach: deleting by another spelling of a
type, and what a refused call says about each item."""

from collections.abc import AsyncIterator

import pytest
from mcp import Client

from tests.conftest import open_client
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.migrations import migrate

pytestmark = pytest.mark.anyio


@pytest.fixture
async def memory(settings: Settings, graph: GraphBackend) -> AsyncIterator[Client]:
    await migrate(graph)  # the registries a fresh `serve` has: core and memory
    async with open_client(settings, "in_process", profile="memory") as client:
        yield client


def person(name: str, entity_type: str = "person") -> dict:
    return {"name": name, "entityType": entity_type, "observations": []}


async def relations(client: Client) -> list[tuple[str, str, str, str | None]]:
    graph = (await client.call_tool("read_graph", {})).structured_content
    return [
        (r["from"], r["to"], r["relationType"], r["properties"].get("_schema_remap_from")) for r in graph["relations"]
    ]


async def test_two_spellings_of_one_type_are_one_relation_and_either_deletes_it(memory: Client) -> None:
    await memory.call_tool("create_entities", {"entities": [person("A"), person("B")]})
    first = await memory.call_tool(
        "create_relations", {"relations": [{"from": "A", "to": "B", "relationType": "likes"}]}
    )
    assert first.structured_content["relations"] == [{"from": "A", "to": "B", "relationType": "LIKES"}]
    again = await memory.call_tool(
        "create_relations", {"relations": [{"from": "A", "to": "B", "relationType": "loves"}]}
    )
    assert again.structured_content["relations"] == []
    assert again.structured_content["skipped"] == [{"from": "A", "to": "B", "relationType": "LIKES"}]
    assert await relations(memory) == [("A", "B", "LIKES", ":likes")]  # the first spelling is the one kept
    done = await memory.call_tool(
        "delete_relations", {"relations": [{"from": "A", "to": "B", "relationType": "loves"}]}
    )
    assert not done.is_error
    assert await relations(memory) == []


async def test_a_refused_call_counts_every_item_and_says_why_each_was_refused(memory: Client) -> None:
    await memory.call_tool(
        "create_entities", {"entities": [person("Bob"), person("Acme", "company"), person("Foo", "startup")]}
    )
    refused = await memory.call_tool(
        "create_relations",
        {
            "relations": [
                {"from": "Bob", "to": "Acme", "relationType": "works at"},
                {"from": "Bob", "to": "Foo", "relationType": "works at"},
                {"from": "Bob", "to": "Ghost", "relationType": "knows"},
            ]
        },
    )
    assert refused.is_error
    answer = refused.structured_content
    assert answer["message"] == "2 of 3 relations were rejected; nothing was written"
    [label, missing] = answer["details"]["rejected"]
    assert (label["index"], label["error_code"]) == (1, "SCHEMA_UNKNOWN_LABEL")
    assert label["details"] == {
        "reason": "endpoint_label_not_allowed",
        "endpoint": "to",
        "label": "Entity",
        "allowed": ["Organization"],
    }
    assert (missing["index"], missing["error_code"]) == (2, "ENDPOINT_NOT_FOUND")
    assert await relations(memory) == []


async def test_a_type_that_only_reads_as_a_canonical_one_keeps_its_spelling(memory: Client) -> None:
    created = await memory.call_tool(
        "create_entities", {"entities": [person("Ada", " Person "), person("Bo", "Person")]}
    )
    assert created.structured_content["remapped"] == [{"name": "Ada", "remapped_from": ": Person ", "to": "Person"}]
    await memory.call_tool("create_relations", {"relations": [{"from": "Ada", "to": "Bo", "relationType": "KNOWS "}]})
    assert await relations(memory) == [("Ada", "Bo", "KNOWS", ":KNOWS ")]

"""memory-mcp's boolean_search and fuzzy_search (seed 004), through a real MCP session on every engine tier, in the
memory profile with the search set listed: its boolean syntax, its whole-field similarity with a threshold, its
tag filter, answered as a knowledge graph with the relations touching what was found."""

from collections.abc import AsyncIterator

import pytest
from mcp import Client

from tests.conftest import TESTS, ok, open_client, rejected
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

PEOPLE = [
    {"name": "Alice Smith", "entityType": "person", "observations": ["software engineer at Acme"]},
    {"name": "Bob Stone", "entityType": "person", "observations": ["designer"]},
    {"name": "Acme", "entityType": "organization", "observations": ["builds engines"]},
]


@pytest.fixture
async def memory(settings: Settings, graph: GraphBackend) -> AsyncIterator[Client]:
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "memory"]))  # the memory profile's registry
    async with open_client(settings.model_copy(update={"toolsets": "search"}), "in_process", "memory") as client:
        await ok(client, "create_entities", {"entities": PEOPLE})
        works = {"from": "Alice Smith", "to": "Acme", "relationType": "works_at"}
        await ok(client, "create_relations", {"relations": [works]})
        yield client


def names(answer: dict) -> list[str]:
    return [entity["name"] for entity in answer["entities"]]


async def test_boolean_search_takes_memory_mcp_s_syntax(memory: Client) -> None:
    found = await ok(memory, "boolean_search", {"query": "name:alice AND (type:person OR observation:engineer)"})
    assert names(found) == ["Alice Smith"]
    assert [(r["from"], r["to"]) for r in found["relations"]] == [("Alice Smith", "Acme")]
    assert names(await ok(memory, "boolean_search", {"query": "engines OR designer"})) in (
        ["Acme", "Bob Stone"],
        ["Bob Stone", "Acme"],
    )
    assert names(await ok(memory, "boolean_search", {"query": "type:person NOT stone"})) == ["Alice Smith"]
    # Seed 004: a field contains the value; here from the start of a word (a prefix), as the index finds it.
    assert names(await ok(memory, "boolean_search", {"query": "name:ali"})) == ["Alice Smith"]
    assert sorted(names(await ok(memory, "boolean_search", {"query": "observation:engin"}))) == ["Acme", "Alice Smith"]
    assert names(await ok(memory, "boolean_search", {"query": "type:pers NOT sto"})) == ["Alice Smith"]
    assert names(await ok(memory, "boolean_search", {"query": "name:lice"})) == []  # inside a word: not found
    broken = await rejected(memory, "boolean_search", {"query": "(alice"})
    assert broken["error_code"] == "INVALID_INPUT" and "not closed" in broken["message"]


async def test_fuzzy_search_matches_a_field_as_similar_as_the_threshold(memory: Client) -> None:
    assert names(await ok(memory, "fuzzy_search", {"query": "Alise Smith"})) == ["Alice Smith"]  # 0.91 >= 0.7
    assert names(await ok(memory, "fuzzy_search", {"query": "Alise Smith", "threshold": 0.95})) == []
    assert names(await ok(memory, "fuzzy_search", {"query": "DESIGNR"})) == ["Bob Stone"]  # an observation, folded
    assert names(await ok(memory, "fuzzy_search", {"query": "persn"})) == ["Alice Smith", "Bob Stone"]  # the type
    # Words close enough, but the whole field is not: "software engineer at acme" is far from "enginer".
    assert names(await ok(memory, "fuzzy_search", {"query": "enginer"})) == []
    assert names(await ok(memory, "fuzzy_search", {"query": "enginer", "threshold": 0.2})) != []
    # Two letters have no typo tolerance; as a prefix they find the candidate "Acme", 0.5 similar to "ac".
    assert names(await ok(memory, "fuzzy_search", {"query": "ac", "threshold": 0.5})) == ["Acme"]


async def test_both_take_memory_mcp_s_filters_and_refuse_what_they_cannot_read(memory: Client) -> None:
    await ok(memory, "add_tags", {"entityName": "Bob Stone", "tags": ["team"]})
    assert names(await ok(memory, "fuzzy_search", {"query": "designr", "tags": ["team"]})) == ["Bob Stone"]
    assert names(await ok(memory, "fuzzy_search", {"query": "designr", "tags": ["other"]})) == []
    assert names(await ok(memory, "boolean_search", {"query": "type:person", "tags": ["team"]})) == ["Bob Stone"]
    for args in ({"query": "alice", "threshold": 1.5}, {"query": "!!!"}, {"query": "x", "limit": 0}):
        assert (await rejected(memory, "fuzzy_search", args))["error_code"] == "INVALID_INPUT", args


async def test_fuzzy_search_matches_the_type_as_written_and_its_label(memory: Client) -> None:
    """Seed 004 compares the type among the searchable fields: the type as the entity was given it ("company",
    stored under the label Organization) and the label both match, exactly or misspelt."""
    others = [
        {"name": "Initech", "entityType": "company", "observations": ["makes reports"]},
        {"name": "Idea1", "entityType": "concept", "observations": []},
        {"name": "Party", "entityType": "event", "observations": []},
    ]
    await ok(memory, "create_entities", {"entities": others})
    assert names(await ok(memory, "fuzzy_search", {"query": "company"})) == ["Initech"]
    assert names(await ok(memory, "fuzzy_search", {"query": "compnay"})) == ["Initech"]  # 0.71: two letters swapped
    assert names(await ok(memory, "fuzzy_search", {"query": "concept"})) == ["Idea1"]
    assert names(await ok(memory, "fuzzy_search", {"query": "event"})) == ["Party"]
    assert sorted(names(await ok(memory, "fuzzy_search", {"query": "organization"}))) == ["Acme", "Initech"]

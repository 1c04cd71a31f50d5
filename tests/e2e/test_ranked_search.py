"""`search_nodes_ranked` through a real MCP client on every engine tier: ranking, typos, boolean queries, phrases,
fields, filters, paging, the memory profile, and bad queries.

On embedded and external FalkorDB the candidates come from FalkorDB's full-text index; on the Bolt tier from the
Memgraph dialect's `text_search.search_all`, which the double runs on FalkorDB's index (tests/bolt_double): the
statements and the driver path, not Tantivy's own scoring. Every answer's matches are decided by the gate itself,
so each assertion on which entities match holds on every engine alike."""

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from tests.conftest import MATRIX_SCHEMAS, is_bolt_tier, ok, open_client, rejected
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.services.search import FIRST_BLOCK, MAX_RANKED_LIMIT
from write_gate.serving.config import Settings
from write_gate.store.migrations import migrate
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

INDEX_STATE = "CALL db.indexes() YIELD label, status WHERE label = $label RETURN status"  # FalkorDB's

PEOPLE = {
    "Alice Smith": {"role": "Engineer at Acme", "notes": ["leads the search team", "likes graph databases"]},
    "Bob Jones": {"role": "Designer", "notes": ["works with Alice on dashboards"]},
    "Alicia Keys": {"role": "Musician", "notes": ["plays piano"]},
    "Carol White": {"role": "Engineer", "notes": ["engineer engineer engineer: writes the engine"]},
}


@pytest.fixture
async def client(settings: Settings, matrix_graph: GraphBackend) -> AsyncIterator[Client]:
    async with open_client(settings, "in_process") as client:
        for name, props in PEOPLE.items():
            await write_person(client, name, props, "hr" if name != "Carol White" else "wiki")
        await ok(
            client,
            "write_node",
            {
                "label": "Organization",
                "merge_keys": {"name": "Acme Corp"},
                "properties": {"industry": "search engines"},
                "source": "registry",
                "extraction_method": "api",
            },
        )
        yield client


async def write_person(client: Client, name: str, properties: dict[str, Any], source: str = "hr") -> None:
    args = {"label": "Person", "merge_keys": {"name": name}, "properties": properties, "source": source}
    await ok(client, "write_node", {**args, "extraction_method": "api"})


async def search(client: Client, query: str, **args: Any) -> dict[str, Any]:
    return await ok(client, "search_nodes_ranked", {"query": query, **args})


def names(answer: dict[str, Any]) -> list[str]:
    return [hit["entity"]["name"] for hit in answer["results"]]


async def test_results_are_ranked_with_scores_and_the_fields_that_matched(client: Client) -> None:
    answer = await search(client, "engineer")
    assert set(names(answer)) == {"Alice Smith", "Carol White"}
    assert names(answer)[0] == "Carol White"  # the word four times beats once
    scores = [hit["score"] for hit in answer["results"]]
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[-1] > 0
    matched = {hit["entity"]["name"]: hit["matched_fields"] for hit in answer["results"]}
    assert matched == {"Carol White": ["notes", "role"], "Alice Smith": ["role"]}
    assert answer["searched_by"] == "index"


async def test_a_typo_finds_the_word_with_fuzzy_or_a_tilde(client: Client) -> None:
    assert names(await search(client, "alise")) == []
    assert set(names(await search(client, "alise", fuzzy=True))) == {"Alice Smith", "Bob Jones"}  # Bob's note
    assert set(names(await search(client, "name:alise~"))) == {"Alice Smith"}
    assert set(names(await search(client, "name:alcia~2"))) == {"Alicia Keys"}


async def test_boolean_queries_phrases_prefixes_and_fields(client: Client) -> None:
    assert set(names(await search(client, "alice OR piano"))) == {"Alice Smith", "Bob Jones", "Alicia Keys"}
    assert names(await search(client, "alice -dashboards")) == ["Alice Smith"]
    assert names(await search(client, "alice AND NOT name:alice")) == ["Bob Jones"]
    assert names(await search(client, '"graph databases"')) == ["Alice Smith"]
    assert names(await search(client, '"databases graph"')) == []
    assert set(names(await search(client, "engin*"))) == {"Alice Smith", "Carol White", "Acme Corp"}  # engines
    assert names(await search(client, "type:organization AND search")) == ["Acme Corp"]
    assert set(names(await search(client, "(piano OR dashboards) AND -type:organization"))) == {
        "Alicia Keys",
        "Bob Jones",
    }


async def test_words_side_by_side_find_any_of_them_and_more_words_rank_higher(client: Client) -> None:
    """Seed 004's ranked search: every entity holding a query word scores (TF-IDF summed over the words), best
    first; AND still requires both, and a -word beside them excludes. boolean_search keeps them all required."""
    assert set(names(await search(client, "piano dashboards"))) == {"Alicia Keys", "Bob Jones"}
    both = names(await search(client, "type:organization search"))
    assert both[0] == "Acme Corp" and "Alice Smith" in both  # Acme holds both words, Alice one
    assert names(await search(client, "piano dashboards -name:alicia")) == ["Bob Jones"]
    assert names(await search(client, "piano AND dashboards")) == []
    graph = await ok(client, "boolean_search", {"query": "piano dashboards"})
    assert graph["entities"] == []


async def test_a_query_the_index_cannot_narrow_is_answered_by_a_scan(client: Client) -> None:
    answer = await search(client, "NOT engineer", labels=["Person"])
    assert set(names(answer)) == {"Bob Jones", "Alicia Keys"} and answer["searched_by"] == "scan"


async def test_filters_by_label_source_and_confidence(client: Client) -> None:
    assert names(await search(client, "search", labels=["Organization"])) == ["Acme Corp"]
    assert names(await search(client, "engineer", provenance={"source": "wiki"})) == ["Carol White"]
    answer = await search(client, "engineer", provenance={"min_confidence": 2.0})
    assert answer["results"] == []
    shown = await search(client, "piano", provenance={})
    assert shown["results"][0]["entity"]["provenance"]["role"]["source"] == "hr"


async def test_pages_follow_the_ranking_and_a_cursor_belongs_to_its_search(client: Client) -> None:
    everyone = names(await search(client, "type:person", limit=10))
    assert len(everyone) == 4
    first = await search(client, "type:person", limit=3)
    second = await search(client, "type:person", limit=3, cursor=first["next_cursor"])
    assert names(first) + names(second) == everyone and second["next_cursor"] is None
    other = await rejected(client, "search_nodes_ranked", {"query": "alice", "cursor": first["next_cursor"]})
    assert other["error_code"] == "INVALID_INPUT" and other["details"]["field"] == "cursor"


async def test_a_ranking_past_the_first_block_pages_as_one_list(client: Client) -> None:
    """More matches than the first block of candidates (FIRST_BLOCK per label): the first pages read that block,
    later ones the rest too, and however a client pages, it meets one ranking: every match once, in one order;
    a page within the first block reads one statement."""
    matches = FIRST_BLOCK + 150
    items = [
        {
            "label": "Person",
            "merge_keys": {"name": f"signal {i:03d}"},
            # The gate's TF-IDF counts occurrences, the engine's score weighs them by length as well: they differ.
            "properties": {"notes": [" ".join(["beacon"] * (1 + i % 4)) + " seen" + " far" * (i % 7)]},
            "source": "hr",
            "extraction_method": "api",
        }
        for i in range(matches)
    ]
    assert (await ok(client, "write_nodes", {"items": items}))["rejected"] == 0
    whole = await search(client, "beacon", limit=MAX_RANKED_LIMIT)
    more = await search(client, "beacon", limit=MAX_RANKED_LIMIT, cursor=whole["next_cursor"])
    in_one = names(whole) + names(more)
    assert sorted(in_one) == sorted(item["merge_keys"]["name"] for item in items) and more["next_cursor"] is None
    paged: list[str] = []
    cursor = None
    while True:
        page = await search(client, "beacon", limit=20, **({"cursor": cursor} if cursor else {}))
        paged += names(page)
        if (cursor := page["next_cursor"]) is None:
            break
    assert paged == in_one
    scores = [hit["score"] for hit in whole["results"][:FIRST_BLOCK]]  # the first block: every candidate matches
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[-1]  # ranked by the gate, not as read


async def test_relations_touching_the_results_come_with_them(client: Client) -> None:
    await ok(
        client,
        "write_relationship",
        {
            "type": "WORKS_FOR",
            "from_label": "Person",
            "from_keys": {"name": "Alicia Keys"},
            "to_label": "Organization",
            "to_keys": {"name": "Acme Corp"},
            "source": "hr",
            "extraction_method": "api",
        },
    )
    answer = await search(client, "piano")
    assert [(r["from"], r["to"], r["relationType"]) for r in answer["relations"]] == [
        ("Alicia Keys", "Acme Corp", "WORKS_FOR")
    ]


async def test_a_written_value_is_found_by_its_new_words_and_not_its_old(client: Client) -> None:
    await write_person(client, "Alicia Keys", {"role": "Composer"})
    assert names(await search(client, "composer")) == ["Alicia Keys"]
    assert names(await search(client, "musician")) == []


async def test_a_merged_name_finds_its_survivor_through_its_aliases(client: Client) -> None:
    await ok(
        client,
        "write_node",
        {"label": "Organization", "merge_keys": {"name": "Acme Inc"}, "source": "crm", "extraction_method": "api"},
    )
    merge = {
        "survivor": {"label": "Organization", "merge_keys": {"name": "Acme Corp"}},
        "merged": [{"label": "Organization", "merge_keys": {"name": "Acme Inc"}}],
    }
    await ok(client, "merge_entities", merge)
    answer = await search(client, "inc")
    assert names(answer) == ["Acme Corp"] and answer["results"][0]["matched_fields"] == ["aliases"]


@pytest.mark.parametrize(
    "query",
    ["(alice", "alice)", "AND", "---", "x~3", "a" * 1001, " OR ".join(f"w{i}" for i in range(33))],
)
async def test_a_query_that_does_not_parse_is_refused_with_its_reason(client: Client, query: str) -> None:
    answer = await rejected(client, "search_nodes_ranked", {"query": query})
    assert answer["error_code"] == "INVALID_INPUT" and answer["details"]["field"] == "query"


async def test_the_memory_profile_offers_it_beside_the_official_search(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    async with open_client(settings, "in_process", profile="memory") as client:
        entities = [
            {"name": "Ada Lovelace", "entityType": "person", "observations": ["wrote the first program"]},
            {"name": "Charles Babbage", "entityType": "person", "observations": ["designed the engine"]},
        ]
        await ok(client, "create_entities", {"entities": entities})
        answer = await ok(client, "search_nodes_ranked", {"query": "observations:progam~"})
        assert names(answer) == ["Ada Lovelace"] and answer["results"][0]["matched_fields"] == ["observations"]


async def test_text_written_before_migration_0007_is_split_and_found(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    """A node whose search text still joins its values with newlines (as before 0007) is rewritten by it."""
    async with open_client(settings, "in_process") as client:
        await write_person(client, "Old Timer", {"role": "archivist"})
    await matrix_graph.write(
        Statement("MATCH (n:Person) SET n._search = replace(n._search, $tab, $newline)", {"tab": "\t", "newline": "\n"})
    )
    assert "0007_text_search" in await migrate(matrix_graph)
    async with open_client(settings, "in_process") as client:
        assert names(await search(client, "archivist")) == ["Old Timer"]
    rows = await matrix_graph.read(Statement("MATCH (n:Person) RETURN n._search AS s"))
    assert rows == [{"s": "\told timer\tperson\tarchivist"}]


async def test_the_bolt_tier_searches_through_memgraphs_text_index(settings: Settings, client: Client) -> None:
    if not is_bolt_tier(settings):
        pytest.skip("the Memgraph dialect's text search statements run on the Bolt tier only")
    assert (await search(client, "piano"))["searched_by"] == "index"


async def test_an_index_still_being_built_is_not_trusted(settings: Settings, graph: GraphBackend) -> None:
    """FalkorDB builds a full-text index over existing nodes in the background (after its creation, and at every
    start) and answers nothing until it is done: the search's statement asks the index's state too, and the search
    scans meanwhile. Here the registry is loaded onto 100,000 nodes already there, then searched at once."""
    if graph.dialect.name != "falkordb":
        pytest.skip("Memgraph builds a text index within CREATE TEXT INDEX")
    for first in range(0, 100_000, 25_000):
        await graph.write(
            Statement(
                "UNWIND range($first, $first + 24999) AS i CREATE (:Person {name: 'p' + toString(i), "
                "_key: '{\"name\":\"p' + toString(i) + '\"}', _search: '\tp' + toString(i) + '\tperson'})",
                {"first": first},
            )
        )
    async with open_client(settings, "in_process") as client:
        await load_into_graph(graph, read_sources([MATRIX_SCHEMAS]))
        await ok(client, "refresh_schema_cache", {})
        answer = await search(client, "p7", labels=["Person"])
        [state] = await graph.read(Statement(INDEX_STATE, {"label": "Person"}))
    assert names(answer) == ["p7"]  # whole, however far the index had come
    if state["status"] != "OPERATIONAL":  # still building after the search: it was throughout, and was not trusted
        assert answer["searched_by"] == "scan"

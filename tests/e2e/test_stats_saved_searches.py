"""`get_graph_stats` (and its resource) and the saved searches, through a real MCP client on every engine tier.

The statistics are checked against the graph itself, read here property by property: each count, bucket and
day is what the stored nodes and relationships say, computed independently of the gate's aggregates."""

import json
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.conftest import MATRIX_SCHEMAS, every_toolset, ok, open_client, rejected
from write_gate.access.agents import AgentsFile, Grant
from write_gate.core.cypher.statement import Statement
from write_gate.core.registry import ConflictPolicy
from write_gate.core.statistics import bucket_of, bucket_ranges
from write_gate.engines import GraphBackend
from write_gate.services.reads import SearchNodesRequest
from write_gate.serving.config import Settings
from write_gate.store.bundled import bundled
from write_gate.store.migrations import migrate
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

REGISTERED = "['Person', 'Organization', 'Entity']"
RPG = bundled("schemas") / "examples" / "rpg"


@pytest.fixture
async def kept_both(settings: Settings, matrix_graph: GraphBackend) -> Settings:
    """Conflicting values are held open (keep_both), so a second agent's write leaves one to count."""
    return settings.model_copy(update={"conflict_policy": ConflictPolicy.KEEP_BOTH})


@pytest.fixture
async def bot_a(kept_both: Settings) -> AsyncIterator[Client]:
    async with open_client(kept_both.model_copy(update={"agent": "bot-a"}), "in_process") as client:
        yield client


@pytest.fixture
async def bot_b(kept_both: Settings) -> AsyncIterator[Client]:
    async with open_client(kept_both.model_copy(update={"agent": "bot-b"}), "in_process") as client:
        yield client


def node(label: str, name: str, source: str, method: str = "api", **props: Any) -> dict[str, Any]:
    return {
        "label": label,
        "merge_keys": {"name": name},
        "properties": props,
        "source": source,
        "extraction_method": method,
    }


def rel(type_: str, start: tuple[str, str], end: tuple[str, str], source: str) -> dict[str, Any]:
    return {
        "type": type_,
        "from_label": start[0],
        "from_keys": {"name": start[1]},
        "to_label": end[0],
        "to_keys": {"name": end[1]},
        "source": source,
        "extraction_method": "api",
    }


async def write_graph(bot_a: Client, bot_b: Client, graph: GraphBackend) -> None:
    await ok(bot_a, "write_node", node("Person", "Ada", "hr", age=36))
    await ok(bot_a, "write_node", node("Person", "Bob", "hr"))
    await ok(bot_a, "write_node", node("Person", "Robert", "wiki", "llm"))
    await ok(bot_b, "write_node", node("Organization", "Acme", "registry", "llm"))
    held = await ok(bot_b, "write_node", node("Person", "Ada", "wiki", "llm", age=37))
    assert [c["outcome"] for c in held["conflicts"]] == ["open"]
    await ok(bot_b, "write_relationship", rel("WORKS_FOR", ("Person", "Ada"), ("Organization", "Acme"), "registry"))
    await ok(bot_a, "write_relationship", rel("KNOWS", ("Person", "Ada"), ("Person", "Bob"), "hr"))
    merge = {
        "survivor": {"label": "Person", "merge_keys": {"name": "Bob"}},
        "merged": [{"label": "Person", "merge_keys": {"name": "Robert"}}],
    }
    await ok(bot_a, "merge_entities", merge)  # Robert becomes an alias: no longer an entity
    await ok(bot_a, "save_search", {"name": "people", "query": "a"})  # a system node: never an entity
    # Archiving (part K's tools) marks a node so; here it is set as they set it.
    await graph.write(Statement("MATCH (n:Person {name: 'Bob'}) SET n._archived_at = '2026-01-01T00:00:00.000Z'"))


async def stored(graph: GraphBackend) -> tuple[list[dict[str, Any]], list[tuple[str, dict[str, Any]]]]:
    """The entities (registered labels, not aliases) and relations, as stored."""
    nodes = await graph.read(
        Statement(
            f"MATCH (n) WHERE any(l IN labels(n) WHERE l IN {REGISTERED}) AND n._alias_of IS NULL "
            "RETURN labels(n)[0] AS label, properties(n) AS p"
        )
    )
    rels = await graph.read(Statement("MATCH ()-[r]->() RETURN type(r) AS type, properties(r) AS p"))
    return [{"label": row["label"], **row["p"]} for row in nodes], [(row["type"], row["p"]) for row in rels]


def confidence_of(values: list[float]) -> dict[str, Any]:
    buckets = Counter(bucket_of(v) for v in values)
    return {
        "buckets": [{"range": r, "count": buckets.get(i, 0)} for i, r in enumerate(bucket_ranges())],
        "min": min(values),
        "mean": pytest.approx(sum(values) / len(values)),
        "max": max(values),
    }


def first_day(props: dict[str, Any]) -> str:
    return (props.get("created_at") or props["last_updated"])[:10]


async def test_the_stats_count_what_the_graph_holds_by_type_agent_source_confidence_and_day(
    bot_a: Client, bot_b: Client, graph: GraphBackend
) -> None:
    await write_graph(bot_a, bot_b, graph)
    stats = await ok(bot_a, "get_graph_stats", {})
    nodes, rels = await stored(graph)
    assert {n["name"] for n in nodes} == {"Ada", "Bob", "Acme"}  # the alias and the saved search are not entities
    assert stats["totalEntities"] == 3 and stats["totalRelations"] == 2
    assert stats["entityTypesCounts"] == {"Organization": 1, "Person": 2}
    assert stats["relationTypesCounts"] == {"KNOWS": 1, "WORKS_FOR": 1}
    assert stats["entitiesByAgent"] == dict(Counter(n["written_by"] for n in nodes))
    assert stats["entitiesByAgent"] == {"bot-a": 1, "bot-b": 2}  # Ada's last write was bot-b's
    assert stats["relationsByAgent"] == {"bot-a": 1, "bot-b": 1}
    assert stats["entitiesBySource"] == dict(Counter(n["source"] for n in nodes))
    assert stats["relationsBySource"] == {"hr": 1, "registry": 1}
    assert stats["entityConfidence"] == confidence_of([n["confidence"] for n in nodes])
    assert stats["relationConfidence"] == confidence_of([p["confidence"] for _, p in rels])
    days = Counter(first_day(n) for n in nodes)
    rel_days = Counter(first_day(p) for _, p in rels)
    assert stats["growth"] == [
        {"date": d, "entities": days.get(d, 0), "relations": rel_days.get(d, 0)} for d in sorted(days | rel_days)
    ]
    assert stats["growthBy"] == "created_at"
    assert stats["archivedEntities"] == 1
    assert stats["conflictsOpen"] == 1
    by_time = sorted(nodes, key=lambda n: (n["last_updated"], n["_key"]))
    assert stats["oldestEntity"] == {
        "name": by_time[0]["name"],
        "entityType": by_time[0]["label"],
        "date": by_time[0]["last_updated"],
    }
    assert stats["newestEntity"]["name"] == by_time[-1]["name"]

    # The resource answers the same.
    resources = {str(r.uri) for r in (await bot_a.list_resources()).resources}
    assert "write-gate://stats" in resources
    [content] = (await bot_a.read_resource("write-gate://stats")).contents
    assert json.loads(content.text) == stats


async def test_an_empty_graph_has_zero_counts_and_no_oldest_entity(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    async with open_client(settings, "in_process") as client:
        stats = await ok(client, "get_graph_stats", {})
        refused = await rejected(client, "get_graph_stats", {"labels": ["Person"]})
    assert (stats["totalEntities"], stats["totalRelations"], stats["conflictsOpen"]) == (0, 0, 0)
    assert stats["oldestEntity"] is None and stats["newestEntity"] is None and stats["growth"] == []
    assert stats["entityConfidence"]["mean"] is None
    assert [b["count"] for b in stats["entityConfidence"]["buckets"]] == [0] * 10
    assert refused["error_code"] == "INVALID_INPUT"


async def test_the_memory_profile_offers_stats_and_saved_searches(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    async with open_client(settings, "in_process", profile="memory") as client:
        await ok(
            client, "create_entities", {"entities": [{"name": "Ada", "entityType": "Person", "observations": ["x"]}]}
        )
        stats = await ok(client, "get_graph_stats", {})
        await ok(client, "save_search", {"name": "ada", "query": "ada"})
        run = await ok(client, "execute_saved_search", {"name": "ada"})
    assert stats["entityTypesCounts"] == {"Person": 1}
    assert stats["entitiesBySource"] == {"test-agent": 1}  # the memory profile's source: the client's name
    assert [e["name"] for e in run["entities"]] == ["Ada"]


# --- saved searches -----------------------------------------------------------------------------------------


@pytest.fixture
async def client(settings: Settings, matrix_graph: GraphBackend) -> AsyncIterator[Client]:
    async with open_client(settings.model_copy(update={"agent": "curator"}), "in_process") as client:
        for name, role in (("Alice Smith", "engineer"), ("Bob Jones", "designer"), ("Alicia Keys", "musician")):
            await ok(client, "write_node", node("Person", name, "hr", role=role))
        await ok(client, "write_node", node("Organization", "Acme Alloys", "registry"))
        yield client


def entity_names(answer: dict[str, Any]) -> list[str]:
    return sorted(e["name"] for e in answer["entities"])


def hit_names(answer: dict[str, Any]) -> list[str]:
    return [hit["entity"]["name"] for hit in answer["results"]]


async def test_a_saved_search_is_stamped_listed_run_counted_and_deleted(client: Client) -> None:
    saved = await ok(client, "save_search", {"name": "people", "query": "ali", "labels": ["Person"], "limit": 10})
    assert (saved["created_by"], saved["useCount"], saved["searchType"]) == ("curator", 0, "basic")
    assert saved["created_at"].endswith("Z") and saved.get("lastExecuted") is None

    first = await ok(client, "execute_saved_search", {"name": "people"})
    assert entity_names(first) == ["Alice Smith", "Alicia Keys"]  # Acme Alloys is no Person
    direct = await ok(client, "search_nodes", {"query": "ali", "labels": ["Person"], "limit": 10})
    assert {k: v for k, v in first.items() if k != "savedSearch"} == direct  # that search's answer
    assert first["savedSearch"]["useCount"] == 1 and first["savedSearch"]["lastExecuted"]
    second = await ok(client, "execute_saved_search", {"name": "people"})
    assert second["savedSearch"]["useCount"] == 2

    [listed] = (await ok(client, "list_saved_searches", {}))["searches"]
    assert (listed["name"], listed["useCount"], listed["labels"], listed["limit"]) == ("people", 2, ["Person"], 10)

    assert await ok(client, "delete_saved_search", {"name": "people"}) == {"deleted": "people"}
    assert (await ok(client, "list_saved_searches", {}))["searches"] == []
    for tool in ("delete_saved_search", "execute_saved_search"):
        gone = await rejected(client, tool, {"name": "people"})
        assert (gone["error_code"], gone["details"]["reason"]) == ("INVALID_INPUT", "not_saved")


async def test_each_search_type_runs_its_search(client: Client) -> None:
    searches = {
        "ranked": {"query": "alice", "searchType": "ranked"},
        "boolean": {"query": "engineer OR musician", "searchType": "boolean"},
        "fuzzy": {"query": "alise", "searchType": "fuzzy"},
        "ranked two words": {"query": "engineer musician", "searchType": "ranked"},
        "boolean two words": {"query": "engineer musician", "searchType": "boolean"},
    }
    for name, args in searches.items():
        await ok(client, "save_search", {"name": name, **args})
    ranked = await ok(client, "execute_saved_search", {"name": "ranked"})
    assert hit_names(ranked) == ["Alice Smith"] and "entities" not in ranked
    assert ranked["searched_by"] in ("index", "scan")
    boolean = await ok(client, "execute_saved_search", {"name": "boolean"})
    assert sorted(hit_names(boolean)) == ["Alice Smith", "Alicia Keys"]
    # Words side by side: any of them in a ranked search, all of them in a boolean one (as boolean_search reads them).
    either = await ok(client, "execute_saved_search", {"name": "ranked two words"})
    assert sorted(hit_names(either)) == ["Alice Smith", "Alicia Keys"]
    assert hit_names(await ok(client, "execute_saved_search", {"name": "boolean two words"})) == []
    fuzzy = await ok(client, "execute_saved_search", {"name": "fuzzy"})
    direct = await ok(client, "search_nodes_ranked", {"query": "alise", "fuzzy": True})
    assert hit_names(fuzzy) == hit_names(direct) and "Alice Smith" in hit_names(fuzzy)


async def test_a_name_saved_twice_is_refused_and_an_update_changes_the_given_fields(client: Client) -> None:
    await ok(client, "save_search", {"name": "s", "query": "ali", "description": "people named ali"})
    again = await rejected(client, "save_search", {"name": "s", "query": "bob"})
    assert again["error_code"] == "SAVED_SEARCH_EXISTS" and "bob" not in json.dumps(again)
    updated = await ok(client, "update_saved_search", {"name": "s", "updates": {"query": "bob", "description": None}})
    assert (updated["query"], updated.get("description"), updated["updated_by"]) == ("bob", None, "curator")
    assert entity_names(await ok(client, "execute_saved_search", {"name": "s"})) == ["Bob Jones"]
    ranked = await ok(client, "update_saved_search", {"name": "s", "updates": {"searchType": "ranked", "limit": 5}})
    assert (ranked["query"], ranked["searchType"], ranked["limit"]) == ("bob", "ranked", 5)
    assert hit_names(await ok(client, "execute_saved_search", {"name": "s"})) == ["Bob Jones"]
    missing = await rejected(client, "update_saved_search", {"name": "nope", "updates": {"query": "x"}})
    assert missing["details"]["reason"] == "not_saved"


@pytest.mark.parametrize(
    "tool,args,field",
    [
        ("save_search", {"name": "s", "query": "a", "limit": 0}, "limit"),  # search_nodes' bounds
        ("save_search", {"name": "s", "query": "a", "searchType": "ranked", "limit": 500}, "limit"),  # ranked's
        ("save_search", {"name": "s", "query": "a", "searchType": "regex"}, "searchType"),
        ("save_search", {"name": "s", "query": "a", "labels": ["Person", "no such:label"]}, "labels"),
        ("save_search", {"name": "s", "query": "a", "colour": "red"}, "colour"),
        ("save_search", {"name": "", "query": "a"}, "name"),
        ("save_search", {"name": "s"}, "query"),
        ("update_saved_search", {"name": "kept", "updates": {"limit": 5000}}, "limit"),
        ("update_saved_search", {"name": "kept", "updates": {"query": None}}, "updates"),
        ("update_saved_search", {"name": "kept", "updates": {"name": "other"}}, "name"),
        ("execute_saved_search", {"name": "kept", "cursor": "x"}, "cursor"),
        ("delete_saved_search", {}, "name"),
    ],
)
async def test_bad_input_is_refused_with_its_field_and_changes_nothing(
    client: Client, tool: str, args: dict[str, Any], field: str
) -> None:
    await ok(client, "save_search", {"name": "kept", "query": "ali"})
    refusal = await rejected(client, tool, args)
    assert refusal["error_code"] == "INVALID_INPUT"
    fields = [p["field"] for p in refusal["details"].get("problems", [])] + [refusal["details"].get("field", "")]
    assert any(field in f for f in fields), refusal
    [kept] = (await ok(client, "list_saved_searches", {}))["searches"]
    assert (kept["query"], kept.get("limit"), kept["useCount"]) == ("ali", None, 0)


async def test_a_stored_search_that_no_longer_passes_is_refused_and_not_counted(
    client: Client, graph: GraphBackend
) -> None:
    await ok(client, "save_search", {"name": "wide", "query": "ali", "searchType": "ranked"})
    await graph.write(Statement("MATCH (s:SavedSearch {name: 'wide'}) SET s.limit = 5000"))  # stored by an older gate
    refusal = await rejected(client, "execute_saved_search", {"name": "wide"})
    assert refusal["error_code"] == "INVALID_INPUT" and refusal["details"]["problems"][0]["field"] == "limit"
    [kept] = (await ok(client, "list_saved_searches", {}))["searches"]
    assert kept["useCount"] == 0


async def test_saved_searches_are_never_read_searched_or_counted_as_entities(client: Client) -> None:
    await ok(client, "save_search", {"name": "Alice Smith", "query": "alice smith", "description": "alice"})
    graph = await ok(client, "read_graph", {})
    assert len(graph["entities"]) == 4
    assert entity_names(await ok(client, "search_nodes", {"query": "alice smith"})) == ["Alice Smith"]
    assert (await ok(client, "search_nodes", {"query": "alice", "labels": ["SavedSearch"]}))["entities"] == []
    assert hit_names(await ok(client, "search_nodes_ranked", {"query": "alice smith"})) == ["Alice Smith"]
    ranked_system = await ok(client, "search_nodes_ranked", {"query": "alice", "labels": ["SavedSearch"]})
    assert ranked_system["results"] == []
    opened = await ok(client, "open_nodes", {"names": ["Alice Smith"]})
    assert [e["entityType"] for e in opened["entities"]] == ["Person"]
    assert (await ok(client, "get_graph_stats", {}))["totalEntities"] == 4


async def test_a_reader_lists_and_counts_but_may_not_save_or_run(
    settings: Settings, matrix_graph: GraphBackend, tmp_path: Path
) -> None:
    agents = AgentsFile.load(tmp_path / "agents.toml")
    agents.add("reader", Grant(tools=("read",)))
    agents.save()
    reader = settings.model_copy(update={"agents_file": tmp_path / "agents.toml", "agent": "reader"})
    async with open_client(every_toolset(reader), "in_process") as client:  # what the grant hides, not a toolset
        listed = {tool.name for tool in (await client.list_tools()).tools}
        assert {"get_graph_stats", "list_saved_searches"} <= listed
        assert not listed & {"save_search", "update_saved_search", "delete_saved_search", "execute_saved_search"}
        refusal = await rejected(client, "save_search", {"name": "s", "query": "a"})
        assert refusal["error_code"] == "PERMISSION_DENIED"
        assert (await ok(client, "list_saved_searches", {}))["searches"] == []


async def test_agents_saving_one_name_at_once_make_one_search(settings: Settings, graph: GraphBackend) -> None:
    """After the migrations (0009 indexes saved searches by name, unique on Memgraph), two agents racing to save
    one name: one saves it, the other is told it exists, and one node holds it."""
    assert "0009_saved_searches" in await migrate(graph)
    answers: dict[str, Any] = {}
    async with (
        open_client(settings.model_copy(update={"agent": "bot-a"}), "in_process") as a,
        open_client(settings.model_copy(update={"agent": "bot-b"}), "in_process") as b,
    ):

        async def save(client: Client, agent: str) -> None:
            result = await client.call_tool("save_search", {"name": "shared", "query": agent})
            answers[agent] = result.structured_content

        async with anyio.create_task_group() as group:
            group.start_soon(save, a, "bot-a")
            group.start_soon(save, b, "bot-b")
        [listed] = (await ok(a, "list_saved_searches", {}))["searches"]
    codes = sorted(answer.get("error_code", "saved") for answer in answers.values())
    assert codes == ["SAVED_SEARCH_EXISTS", "saved"]
    assert listed["created_by"] == listed["query"]  # the winner's own query, stamped with the winner


async def test_a_label_whose_typed_tools_would_take_a_saved_search_tools_name_gets_none(
    settings: Settings, graph: GraphBackend, tmp_path: Path
) -> None:
    """`SAVED_SEARCH` would generate add_/update_/delete_saved_search: the gate's own tools keep their names."""
    entry = {"name": "SAVED_SEARCH", "merge_keys": ["name"], "typed_tools": True, "property_types": {"name": "string"}}
    (tmp_path / "registry.json").write_text(json.dumps({"entries": [entry]}))
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS, RPG / "currency.schema.json", tmp_path]))
    async with open_client(every_toolset(settings), "in_process") as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        await ok(client, "save_search", {"name": "s", "query": "a"})
        assert (await ok(client, "delete_saved_search", {"name": "s"})) == {"deleted": "s"}
    assert {"add_currency", "update_currency", "update_saved_search", "delete_saved_search"} <= tools
    assert "add_saved_search" not in tools


@pytest.mark.skipif(
    "tags" not in SearchNodesRequest.model_fields, reason="part K adds tags and importance to the search models"
)
async def test_a_saved_search_passes_its_tags_and_importance_to_its_search(client: Client) -> None:
    """Saved with tags and an importance range, run: the search filters by them as it does when called."""
    await ok(client, "write_node", node("Person", "Alice Smith", "hr", tags=["ml"], importance=8))
    await ok(client, "write_node", node("Person", "Alicia Keys", "hr", tags=["ml"], importance=2))
    filters = {"tags": ["ml"], "minImportance": 5, "maxImportance": 10}
    await ok(client, "save_search", {"name": "ml", "query": "ali", **filters})
    await ok(client, "save_search", {"name": "ml-ranked", "query": "ali*", "searchType": "ranked", **filters})
    run = await ok(client, "execute_saved_search", {"name": "ml"})
    assert entity_names(run) == entity_names(await ok(client, "search_nodes", {"query": "ali", **filters}))
    assert entity_names(run) == ["Alice Smith"] and run["savedSearch"]["tags"] == ["ml"]
    ranked = await ok(client, "execute_saved_search", {"name": "ml-ranked"})
    assert hit_names(ranked) == ["Alice Smith"]


async def test_concurrent_updates_each_land_none_lost(client: Client, graph: GraphBackend) -> None:
    """Updates guarded by the revision they read: one that lost the race reads again and lands after the other,
    so every update counts (the revision moved once per update) and the last one's fields are whole."""
    await ok(client, "save_search", {"name": "s", "query": "ali"})
    updates = [{"description": f"d{i}", "limit": i + 1} for i in range(4)]
    answers: list[dict[str, Any]] = []

    async def update(fields: dict[str, Any]) -> None:
        answers.append(await ok(client, "update_saved_search", {"name": "s", "updates": fields}))

    async with anyio.create_task_group() as group:
        for fields in updates:
            group.start_soon(update, fields)
    [row] = await graph.read(Statement("MATCH (s:SavedSearch {name: 's'}) RETURN properties(s) AS p"))
    assert row["p"]["_rev"] == 1 + len(updates)
    assert {"description": row["p"]["description"], "limit": row["p"]["limit"]} in updates
    assert len(answers) == len(updates)


async def test_the_stats_say_which_entities_the_reads_show_and_which_are_archived(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    """Issue 26, item 6: every read hides archived entities, so the answer says which count is which:
    `totalEntities` (memory-mcp's name, as it always counted: every entity held) is `activeEntities` (what the
    reads show) plus `archivedEntities`; `entityTypesCounts` counts what totalEntities does."""
    async with open_client(settings, "in_process") as client:
        for name in ("Ada", "Bob", "Old"):
            await ok(client, "write_node", node("Person", name, "hr", importance=1 if name == "Old" else 9))
        await ok(client, "write_node", node("Organization", "Acme", "registry"))
        assert (await ok(client, "archive_entities", {"importanceLessThan": 5}))["entityNames"] == ["Old"]
        stats = await ok(client, "get_graph_stats", {})
        shown = (await ok(client, "read_graph", {}))["entities"]
    assert (stats["totalEntities"], stats["activeEntities"], stats["archivedEntities"]) == (4, 3, 1)
    assert stats["activeEntities"] == len(shown) == stats["totalEntities"] - stats["archivedEntities"]
    assert stats["entityTypesCounts"] == {"Organization": 1, "Person": 3}

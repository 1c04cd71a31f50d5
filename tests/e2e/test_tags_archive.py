"""Seed 004's tags and importance (and the read filters on them), through real MCP client sessions on every
engine tier, in both profiles: every write through the gate, with provenance, claims and history."""

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.conftest import CLIENT_NAME, TESTS, ok, open_client, rejected
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

KNOWLEDGE_SCHEMAS = TESTS / "schemas" / "knowledge"


async def person(client: Client, name: str, **properties: Any) -> None:
    args = {
        "label": "Person",
        "merge_keys": {"name": name},
        "properties": properties,
        "source": "test",
        "extraction_method": "manual",
    }
    await ok(client, "write_node", args)


@pytest.fixture
async def gate(settings: Settings, graph: GraphBackend) -> AsyncIterator[Client]:
    await load_into_graph(graph, read_sources([KNOWLEDGE_SCHEMAS]))
    async with open_client(settings, "in_process") as client:
        yield client


@pytest.fixture
async def memory(settings: Settings, graph: GraphBackend) -> AsyncIterator[Client]:
    await load_into_graph(graph, read_sources([KNOWLEDGE_SCHEMAS]))
    async with open_client(settings, "in_process", profile="memory") as client:
        yield client


def names(answer: dict[str, Any]) -> list[str]:
    return sorted(e["name"] for e in answer["entities"])


# --- tags and importance -------------------------------------------------------------------------------


async def test_tags_are_normalised_added_and_removed_with_the_answer_saying_what_they_now_are(gate: Client) -> None:
    await person(gate, "Ada")
    added = await ok(gate, "add_tags", {"entityName": "Ada", "tags": [" Math ", "math", "Pioneer"]})
    assert added == {"entityName": "Ada", "entityType": "Person", "tags": ["math", "pioneer"]}
    again = await ok(gate, "add_tags", {"entityName": "Ada", "tags": ["ENGINES"]})
    assert again["tags"] == ["math", "pioneer", "engines"]  # after those held, not sorted (seed 004)
    removed = await ok(gate, "remove_tags", {"entityName": "Ada", "tags": ["MATH", "absent"]})
    assert removed["tags"] == ["pioneer", "engines"]
    [ada] = (await ok(gate, "open_nodes", {"names": ["Ada"]}))["entities"]
    assert ada["properties"]["tags"] == ["pioneer", "engines"]


async def test_importance_is_set_and_bounded_and_a_refusal_never_echoes_the_value(gate: Client) -> None:
    await person(gate, "Ada")
    assert (await ok(gate, "set_importance", {"entityName": "Ada", "importance": 7.5}))["importance"] == 7.5
    assert (await ok(gate, "set_importance", {"entityName": "Ada", "importance": 3}))["importance"] == 3
    for bad in (10.5, -1, "high", True):
        refusal = await rejected(gate, "set_importance", {"entityName": "Ada", "importance": bad})
        assert refusal["error_code"] == "INVALID_INPUT"
        assert refusal["details"]["problems"][0]["field"] == "importance"
        assert "10.5" not in str(refusal) and "high" not in str(refusal)
    [ada] = (await ok(gate, "open_nodes", {"names": ["Ada"]}))["entities"]
    assert ada["properties"]["importance"] == 3


async def test_bad_tags_unknown_and_ambiguous_names_are_refused_with_their_codes(gate: Client) -> None:
    await person(gate, "Mercury")
    project = {
        "label": "Project",
        "merge_keys": {"name": "Mercury"},
        "properties": {"owner": "x"},
        "source": "t",
        "extraction_method": "manual",
    }
    await ok(gate, "write_node", project)
    empty = await rejected(gate, "add_tags", {"entityName": "Mercury", "entityType": "Person", "tags": ["ok", "  "]})
    assert (empty["error_code"], empty["details"]["field"]) == ("INVALID_INPUT", "tags.1")
    none = await rejected(gate, "add_tags", {"entityName": "Venus", "tags": ["x"]})
    assert none["error_code"] == "ENTITY_NOT_FOUND"
    both = await rejected(gate, "add_tags", {"entityName": "Mercury", "tags": ["x"]})
    assert both["error_code"] == "INVALID_INPUT"
    assert both["details"]["labels"] == ["Person", "Project"]
    chosen = await ok(gate, "add_tags", {"entityName": "Mercury", "entityType": "Project", "tags": ["planet"]})
    assert (chosen["entityType"], chosen["tags"]) == ("Project", ["planet"])
    # The Project has required properties the tag write does not repeat: a change, not a new node.
    ranked = await ok(gate, "search_nodes_ranked", {"query": "tag:planet"})
    assert [(h["entity"]["entityType"], h["matched_fields"]) for h in ranked["results"]] == [("Project", ["tags"])]
    extra = await rejected(gate, "add_tags", {"entityName": "Mercury", "tags": ["x"], "color": "red"})
    assert extra["error_code"] == "INVALID_INPUT"


async def test_a_registry_entry_that_declares_tags_has_its_type_enforced(gate: Client) -> None:
    await ok(
        gate,
        "write_node",
        {"label": "Ledger", "merge_keys": {"name": "Books"}, "source": "t", "extraction_method": "manual"},
    )
    refusal = await rejected(gate, "add_tags", {"entityName": "Books", "tags": ["x"]})
    assert refusal["error_code"] == "SCHEMA_TYPE_MISMATCH"
    assert refusal["details"]["property"] == "tags"


async def test_tag_writes_carry_provenance_claims_and_history(gate: Client) -> None:
    await person(gate, "Ada")
    await ok(gate, "add_tags", {"entityName": "Ada", "tags": ["math"]})
    [ada] = (await ok(gate, "open_nodes", {"names": ["Ada"], "provenance": {}}))["entities"]
    assert ada["provenance"]["tags"]["agent"] == CLIENT_NAME
    assert ada["properties"]["updated_by"] == CLIENT_NAME
    history = await ok(gate, "get_history", {"label": "Person", "merge_keys": {"name": "Ada"}})
    tag_changes = [c for c in history["changes"] if c["property"] == "tags"]
    assert [(c["before"], c["after"]) for c in tag_changes] == [(None, ["math"])]


async def test_racing_tag_writers_both_land(gate: Client, settings: Settings) -> None:
    await person(gate, "Ada")
    async with open_client(settings, "in_process") as other, anyio.create_task_group() as tg:
        for i in range(4):
            tg.start_soon(ok, gate if i % 2 else other, "add_tags", {"entityName": "Ada", "tags": [f"t{i}"]})
    [ada] = (await ok(gate, "open_nodes", {"names": ["Ada"]}))["entities"]
    assert sorted(ada["properties"]["tags"]) == ["t0", "t1", "t2", "t3"]  # in the order they landed


async def test_tags_to_multiple_entities_finds_every_name_before_writing(memory: Client) -> None:
    people = [{"name": n, "entityType": "person", "observations": []} for n in ("Ada", "Alan")]
    await ok(memory, "create_entities", {"entities": people})
    missing = await rejected(memory, "add_tags_to_multiple_entities", {"entityNames": ["Ada", "Nobody"], "tags": ["x"]})
    assert missing["error_code"] == "ENTITY_NOT_FOUND"
    untouched = await ok(memory, "open_nodes", {"names": ["Ada"]})
    assert "tags" not in untouched["entities"][0]["properties"]
    done = await ok(memory, "add_tags_to_multiple_entities", {"entityNames": ["Ada", "Alan"], "tags": ["CS"]})
    assert [(r["entityName"], r["tags"]) for r in done["results"]] == [("Ada", ["cs"]), ("Alan", ["cs"])]


# --- the read filters ----------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", ["gate", "memory"])
async def test_search_filters_by_tags_and_importance_in_both_profiles(
    settings: Settings, graph: GraphBackend, profile: str
) -> None:
    await load_into_graph(graph, read_sources([KNOWLEDGE_SCHEMAS]))
    async with open_client(settings, "in_process") as gate, open_client(settings, "in_process", profile) as client:
        for name, tags, importance in (("Ada", ["math"], 9), ("Alan", ["cs", "math"], 5), ("Grace", ["cs"], 2)):
            await person(gate, name, note="pioneer")
            await ok(client, "add_tags", {"entityName": name, "tags": tags})
            await ok(client, "set_importance", {"entityName": name, "importance": importance})
        await person(gate, "Bob", note="pioneer")  # no tags, no importance

        async def found(**filters: Any) -> list[str]:
            return names(await ok(client, "search_nodes", {"query": "pioneer", **filters}))

        assert await found() == ["Ada", "Alan", "Bob", "Grace"]
        assert await found(tags=["MATH"]) == ["Ada", "Alan"]
        assert await found(tags=["cs", "nope"]) == ["Alan", "Grace"]
        assert await found(minImportance=5) == ["Ada", "Alan"]
        assert await found(maxImportance=5) == ["Alan", "Grace"]
        assert await found(tags=["cs"], minImportance=3, maxImportance=6) == ["Alan"]
        bad = await rejected(client, "search_nodes", {"query": "pioneer", "minImportance": 11})
        assert bad["error_code"] == "INVALID_INPUT"

        async def ranked(query: str, **filters: Any) -> list[str]:
            answer = await ok(client, "search_nodes_ranked", {"query": query, **filters})
            return sorted(h["entity"]["name"] for h in answer["results"])

        assert await ranked("math") == ["Ada", "Alan"]  # a tag is text
        assert await ranked("tag:cs") == ["Alan", "Grace"]
        assert await ranked("pioneer", tags=["math"], maxImportance=8) == ["Alan"]
        assert await ranked("pioneer", minImportance=1) == ["Ada", "Alan", "Grace"]


# --- the archive ---------------------------------------------------------------------------------------


async def seeded(gate: Client) -> None:
    """Ada (importance 9, tagged keep), Bob (importance 1), Old (tagged stale), each KNOWS Ada."""
    for name in ("Ada", "Bob", "Old"):
        await person(gate, name, note="pioneer")
    await ok(gate, "set_importance", {"entityName": "Ada", "importance": 9})
    await ok(gate, "add_tags", {"entityName": "Ada", "tags": ["keep"]})
    await ok(gate, "set_importance", {"entityName": "Bob", "importance": 1})
    await ok(gate, "add_tags", {"entityName": "Old", "tags": ["stale"]})
    for name in ("Bob", "Old"):
        link = {"type": "KNOWS", "from_label": "Person", "from_keys": {"name": name}, "to_label": "Person"}
        await ok(gate, "write_relationship", {**link, "to_keys": {"name": "Ada"}, **PROV})


PROV = {"source": "test", "extraction_method": "manual"}


async def test_archive_matches_any_criterion_and_a_dry_run_changes_nothing(gate: Client) -> None:
    await seeded(gate)
    criteria = {"importanceLessThan": 5, "tags": ["STALE"]}
    dry = await ok(gate, "archive_entities", {**criteria, "dryRun": True})
    assert (dry["archived"], dry["entityNames"], dry["dryRun"]) == (2, ["Bob", "Old"], True)
    assert names(await ok(gate, "read_graph", {})) == ["Ada", "Bob", "Old"]
    done = await ok(gate, "archive_entities", criteria)
    assert (done["archived"], done["entityNames"]) == (2, ["Bob", "Old"])
    assert (await ok(gate, "archive_entities", criteria))["archived"] == 0  # archived ones match no more
    future = await ok(gate, "archive_entities", {"olderThan": "2999-01-01", "dryRun": True})
    assert future["entityNames"] == ["Ada"]
    past = await ok(gate, "archive_entities", {"olderThan": "2000-01-01T00:00:00Z"})
    assert past["archived"] == 0
    for bad in ({}, {"dryRun": True}, {"olderThan": "yesterday"}, {"tags": []}):
        refusal = await rejected(gate, "archive_entities", bad)
        assert refusal["error_code"] == "INVALID_INPUT", bad


@pytest.mark.parametrize("profile", ["gate", "memory"])
async def test_every_read_skips_archived_entities_and_their_relations_unless_asked(
    settings: Settings, graph: GraphBackend, profile: str
) -> None:
    await load_into_graph(graph, read_sources([KNOWLEDGE_SCHEMAS]))
    async with open_client(settings, "in_process") as gate, open_client(settings, "in_process", profile) as client:
        await seeded(gate)
        await ok(gate, "set_entity_parent", {"entityName": "Old", "parentName": "Ada"})
        await ok(client, "archive_entities", {"tags": ["stale"]})
        everything = {"includeArchived": True}

        async def both(tool: str, args: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
            return await ok(client, tool, args), await ok(client, tool, {**args, **everything})

        def related(answer: dict[str, Any]) -> set[tuple[str, str]]:
            return {(r["from"], r["to"]) for r in answer["relations"]}

        hidden, shown = await both("read_graph", {})
        assert (names(hidden), names(shown)) == (["Ada", "Bob"], ["Ada", "Bob", "Old"])
        assert related(hidden) == {("Bob", "Ada")}
        assert related(shown) == {("Bob", "Ada"), ("Old", "Ada")}
        hidden, shown = await both("search_nodes", {"query": "pioneer"})
        assert (names(hidden), names(shown)) == (["Ada", "Bob"], ["Ada", "Bob", "Old"])
        assert ("Old", "Ada") not in related(hidden)
        hidden, shown = await both("open_nodes", {"names": ["Ada", "Old"]})
        # The gate profile answers Ada's neighbour Bob too; never the archived Old unless asked.
        neighbour = ["Bob"] if profile == "gate" else []
        assert (names(hidden), names(shown)) == (["Ada", *neighbour], ["Ada", *neighbour, "Old"])
        assert related(hidden) == {("Bob", "Ada")}
        hidden, shown = await both("search_nodes_ranked", {"query": "pioneer"})
        assert len(hidden["results"]) == 2 and len(shown["results"]) == 3
        hidden, shown = await both("get_children", {"entityName": "Ada"})
        assert (hidden["children"], [e["name"] for e in shown["children"]]) == ([], ["Old"])
        hidden, shown = await both("get_subtree", {"entityName": "Ada"})
        assert (names(hidden), sorted(names(shown))) == (["Ada"], ["Ada", "Old"])
        # Archived, not gone: its name is taken, and it is found by name to be restored.
        if profile == "memory":
            taken = await ok(client, "create_entities", {"entities": [{"name": "Old", "entityType": "person"}]})
            assert taken["skipped"] == ["Old"]
        restored = await ok(client, "restore_entities", {"entityNames": ["Old", "Ada"]})
        assert (restored["restored"], restored["entityNames"]) == (1, ["Old"])
        assert names(await ok(client, "read_graph", {})) == ["Ada", "Bob", "Old"]


async def test_an_entity_whose_every_relation_leads_to_the_archive_is_read_alone(gate: Client) -> None:
    await seeded(gate)
    await ok(gate, "archive_entities", {"tags": ["keep"]})  # Ada, whom Bob and Old know (their only relations)
    for tool, args in [("read_graph", {}), ("search_nodes", {"query": "pioneer"}), ("open_nodes", {"names": ["Bob"]})]:
        answer = await ok(gate, tool, args)
        assert "Ada" not in names(answer) and "Bob" in names(answer), tool
        assert answer["relations"] == [], tool
    shown = await ok(gate, "open_nodes", {"names": ["Bob"], "includeArchived": True})
    assert [(r["from"], r["to"]) for r in shown["relations"]] == [("Bob", "Ada")]


async def test_a_write_to_an_archived_entity_lands_and_it_stays_archived(gate: Client) -> None:
    await seeded(gate)
    await ok(gate, "archive_entities", {"tags": ["stale"]})
    await ok(gate, "add_tags", {"entityName": "Old", "tags": ["touched"]})
    await person(gate, "Old", note="rewritten")
    assert names(await ok(gate, "open_nodes", {"names": ["Old"]})) == []
    [old, *neighbours] = (await ok(gate, "open_nodes", {"names": ["Old"], "includeArchived": True}))["entities"]
    assert old["name"] == "Old" and [e["name"] for e in neighbours] == ["Ada"]
    assert (old["properties"]["note"], old["properties"]["tags"]) == ("rewritten", ["stale", "touched"])
    assert "_archived_at" not in old["properties"]


async def test_archive_and_restore_are_recorded_in_history(gate: Client) -> None:
    await seeded(gate)
    await ok(gate, "archive_entities", {"tags": ["stale"]})
    await ok(gate, "restore_entities", {"entityNames": ["Old"]})
    history = await ok(gate, "get_history", {"label": "Person", "merge_keys": {"name": "Old"}})
    marks = [(c["agent"], c.get("after") is not None) for c in history["changes"] if c["property"] == "_archived_at"]
    assert marks == [(CLIENT_NAME, False), (CLIENT_NAME, True)]  # newest first: restored, then archived
    missing = await rejected(gate, "restore_entities", {"entityNames": ["Nobody"]})
    assert missing["error_code"] == "ENTITY_NOT_FOUND"


def test_archive_and_restore_are_admin_tools_in_both_profiles() -> None:
    from write_gate.surface.profiles import PROFILES

    for profile in ("gate", "memory"):
        groups = {spec.name: spec.group for spec in PROFILES[profile]}
        assert groups["archive_entities"] == groups["restore_entities"] == "admin"
        assert groups["set_entity_parent"] == groups["add_tags"] == "write"
        assert groups["get_subtree"] == "read"


async def test_a_name_held_under_two_labels_is_restored_whole_or_by_its_entitytype(gate: Client) -> None:
    """restore_entities takes names alone (memory-mcp's arguments): a name under several labels restores each of
    them, or the one `entityType` names; it was refused with "pass entityType", which its input did not accept."""
    await person(gate, "Ada", note="pioneer")
    org = {"label": "Project", "merge_keys": {"name": "Ada"}, "properties": {"owner": "lab"}, **PROV}
    await ok(gate, "write_node", org)
    for label in ("Person", "Project"):
        await ok(gate, "add_tags", {"entityName": "Ada", "entityType": label, "tags": ["stale"]})
    assert (await ok(gate, "archive_entities", {"tags": ["stale"]}))["archived"] == 2

    def held(answer: dict[str, Any]) -> list[str]:
        return sorted(e["entityType"] for e in answer["entities"])

    one = await ok(gate, "restore_entities", {"entityNames": ["Ada"], "entityType": "project"})
    assert (one["restored"], one["entityNames"]) == (1, ["Ada"])
    assert held(await ok(gate, "open_nodes", {"names": ["Ada"]})) == ["Project"]
    await ok(gate, "archive_entities", {"tags": ["stale"]})
    both = await ok(gate, "restore_entities", {"entityNames": ["Ada"]})
    assert (both["restored"], both["entityNames"]) == (2, ["Ada", "Ada"])
    assert held(await ok(gate, "open_nodes", {"names": ["Ada"]})) == ["Person", "Project"]
    wrong = await rejected(gate, "restore_entities", {"entityNames": ["Ada"], "entityType": "Ledger"})
    assert wrong["error_code"] == "ENTITY_NOT_FOUND"
    # Tagging by names alone has the same reading: each entity of the name, or the one entityType names.
    tagged = await ok(gate, "add_tags_to_multiple_entities", {"entityNames": ["Ada"], "tags": ["Both"]})
    assert sorted((r["entityType"], "both" in r["tags"]) for r in tagged["results"]) == [
        ("Person", True),
        ("Project", True),
    ]
    one_tag = {"entityNames": ["Ada"], "tags": ["one"], "entityType": "Person"}
    [person_only] = (await ok(gate, "add_tags_to_multiple_entities", one_tag))["results"]
    assert (person_only["entityType"], person_only["tags"]) == ("Person", ["stale", "both", "one"])


async def test_a_restore_gives_back_every_value_the_entity_held(gate: Client, graph: GraphBackend) -> None:
    """Archive then restore leaves every value as it was: FalkorDB 4.16, removing two properties of a node in one
    SET (the archive's two marks), removed another one in about one node of ten, by where its properties lay."""
    written = {}
    for i in range(30):
        values = {f"field_{j}": f"value {i}.{j}" for j in range(i % 13)}
        await person(gate, f"Many {i:02d}", **values, tags=["swept"])
        written[f"Many {i:02d}"] = values
    for cycle in range(3):  # the marks land at other places among the values each time
        await ok(gate, "archive_entities", {"tags": ["swept"]})
        for i, name in enumerate(written):  # written while archived: values stored after the archive's marks
            if (i + cycle) % 2:
                await person(gate, name, **{f"late_{cycle}_{j}": j for j in range(i % 5)})
        before = await graph.read(Statement("MATCH (n:Person) RETURN n.name AS name, properties(n) AS props"))
        await ok(gate, "restore_entities", {"entityNames": list(written)})
    after = {
        row["name"]: row["props"]
        for row in await graph.read(Statement("MATCH (n:Person) RETURN n.name AS name, properties(n) AS props"))
    }
    for row in before:
        kept = {
            k: v for k, v in row["props"].items() if k not in ("_archived_at", "_archived_by", "_rev", "_seq", "_due")
        }
        now = {k: v for k, v in after[row["name"]].items() if k not in ("_rev", "_seq", "_due")}
        assert now == kept, (cycle, row["name"])

"""Seed 004's hierarchy through real MCP client sessions on every engine tier: set_entity_parent (one CHILD_OF
per child, replaced, removed, never a cycle) through the gate, and the hierarchy reads."""

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.conftest import CLIENT_NAME, TESTS, every_toolset, ok, open_client, rejected
from tests.e2e.test_integrity import limited_agent
from tests.e2e.test_tags_archive import KNOWLEDGE_SCHEMAS, person
from write_gate.access.agents import Grant
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]


@pytest.fixture
async def gate(settings: Settings, graph: GraphBackend) -> AsyncIterator[Client]:
    await load_into_graph(graph, read_sources([KNOWLEDGE_SCHEMAS]))
    async with open_client(settings, "in_process") as client:
        yield client


async def parent(client: Client, child: str, parent_name: str | None, **more: Any) -> dict[str, Any]:
    return await ok(client, "set_entity_parent", {"entityName": child, "parentName": parent_name, **more})


async def tree(client: Client) -> None:
    """root > a > (a1 > a11, a2), root > b."""
    for name in ("root", "a", "b", "a1", "a2", "a11"):
        await person(client, name)
    for child, of in (("a", "root"), ("b", "root"), ("a2", "a"), ("a1", "a"), ("a11", "a1")):
        await parent(client, child, of)


def names(entities: list[dict[str, Any]]) -> list[str]:
    return [e["name"] for e in entities]


async def child_of(graph: GraphBackend) -> set[tuple[str, str]]:
    rows = await graph.read(Statement("MATCH (c)-[:CHILD_OF]->(p) RETURN c.name AS c, p.name AS p"))
    return {(row["c"], row["p"]) for row in rows}


async def test_a_parent_is_set_replaced_and_removed_with_one_link_per_child(gate: Client, graph: GraphBackend) -> None:
    for name in ("Ada", "Math", "Science"):
        await person(gate, name)
    assert await parent(gate, "Ada", "Math") == {
        "entityName": "Ada",
        "entityType": "Person",
        "parentName": "Math",
        "parentType": "Person",
    }
    await parent(gate, "Ada", "Math")  # again: nothing changes
    assert await child_of(graph) == {("Ada", "Math")}
    await parent(gate, "Ada", "Science")
    assert await child_of(graph) == {("Ada", "Science")}
    assert (await parent(gate, "Ada", None))["parentName"] is None
    assert await child_of(graph) == set()
    await parent(gate, "Ada", "Math")
    assert (await parent(gate, "Ada", ""))["parentName"] is None  # memory-mcp's `parentName || undefined`
    assert await child_of(graph) == set()


async def test_the_link_carries_provenance_and_history(gate: Client) -> None:
    for name in ("Ada", "Math", "Science"):
        await person(gate, name)
    await parent(gate, "Ada", "Math")
    await parent(gate, "Ada", "Science")
    opened = await ok(gate, "open_nodes", {"names": ["Ada"]})
    [link] = [r for r in opened["relations"] if r["relationType"] == "CHILD_OF"]
    assert (link["to"], link["properties"]["written_by"], link["properties"]["source"]) == (
        "Science",
        CLIENT_NAME,
        CLIENT_NAME,
    )
    ops = []
    for to in ("Math", "Science"):
        history = await ok(
            gate,
            "get_history",
            {
                "label": "CHILD_OF",
                "from_label": "Person",
                "from_keys": {"name": "Ada"},
                "to_label": "Person",
                "to_keys": {"name": to},
            },
        )
        ops += [(to, c["op"]) for c in history["changes"] if c["property"] == "weight"]
    assert sorted(ops) == [("Math", "delete"), ("Math", "set"), ("Science", "set")]


async def test_cycles_are_refused_and_nothing_changes(gate: Client, graph: GraphBackend) -> None:
    await tree(gate)
    before = await child_of(graph)
    for child, of in (("root", "a11"), ("a", "a"), ("a1", "a11")):
        refusal = await rejected(gate, "set_entity_parent", {"entityName": child, "parentName": of})
        assert refusal["error_code"] == "HIERARCHY_CYCLE", (child, of)
    assert await child_of(graph) == before


async def test_racing_writers_cannot_make_a_cycle(gate: Client, settings: Settings, graph: GraphBackend) -> None:
    for name in ("x", "y"):
        await person(gate, name)
    outcomes: list[bool] = []

    async def attempt(client: Client, child: str, of: str) -> None:
        result = await client.call_tool("set_entity_parent", {"entityName": child, "parentName": of})
        outcomes.append(bool(result.is_error))
        if result.is_error:
            assert result.structured_content["error_code"] == "HIERARCHY_CYCLE"

    async with open_client(settings, "in_process") as other, anyio.create_task_group() as tg:
        tg.start_soon(attempt, gate, "x", "y")
        tg.start_soon(attempt, other, "y", "x")
    assert sorted(outcomes) == [False, True]
    assert len(await child_of(graph)) == 1


async def test_refusals_name_what_is_wrong(gate: Client, settings: Settings, graph: GraphBackend) -> None:
    await person(gate, "Ada")
    missing = await rejected(gate, "set_entity_parent", {"entityName": "Ada", "parentName": "Nobody"})
    assert (missing["error_code"], missing["details"]["field"]) == ("ENTITY_NOT_FOUND", "parentName")
    missing = await rejected(gate, "get_children", {"entityName": "Nobody"})
    assert missing["error_code"] == "ENTITY_NOT_FOUND"
    required = await rejected(gate, "set_entity_parent", {"entityName": "Ada"})
    assert required["error_code"] == "INVALID_INPUT"
    # A registry without the hierarchy's type: the registry's own refusal, naming the types it has.
    other = settings.model_copy(update={"hierarchy_type": "PART_OF"})
    async with open_client(other, "in_process") as client:
        await person(client, "Math")
        unknown = await rejected(client, "set_entity_parent", {"entityName": "Ada", "parentName": "Math"})
    assert unknown["error_code"] == "SCHEMA_UNKNOWN_LABEL"
    assert "CHILD_OF" in unknown["details"]["known_types"]


async def test_the_reads_walk_the_tree(gate: Client) -> None:
    await tree(gate)
    assert (await ok(gate, "get_parent", {"entityName": "a1"}))["parent"]["name"] == "a"
    assert (await ok(gate, "get_parent", {"entityName": "root"}))["parent"] is None
    assert names((await ok(gate, "get_children", {"entityName": "a"}))["children"]) == ["a1", "a2"]
    ancestors = await ok(gate, "get_ancestors", {"entityName": "a11"})
    assert (names(ancestors["ancestors"]), ancestors["depth_truncated"]) == (["a1", "a", "root"], False)
    descendants = await ok(gate, "get_descendants", {"entityName": "root"})
    assert names(descendants["descendants"]) == ["a", "a1", "a11", "a2", "b"]
    subtree = await ok(gate, "get_subtree", {"entityName": "a"})
    assert sorted(names(subtree["entities"])) == ["a", "a1", "a11", "a2"]
    links = {(r["from"], r["to"]) for r in subtree["relations"]}
    assert links == {("a", "root"), ("a1", "a"), ("a2", "a"), ("a11", "a1")}


async def test_descendants_come_depth_first_with_siblings_in_creation_order(gate: Client) -> None:
    """As memory-mcp walks its list of entities (a black-box audit found siblings sorted by name)."""
    for name in ("Root", "B", "A", "A1", "A2", "B1"):
        await person(gate, name)
    for child, of in (("B", "Root"), ("A", "Root"), ("A2", "A"), ("A1", "A"), ("B1", "B")):
        await parent(gate, child, of)
    descendants = await ok(gate, "get_descendants", {"entityName": "Root"})
    assert names(descendants["descendants"]) == ["B", "B1", "A", "A1", "A2"]
    assert names((await ok(gate, "get_children", {"entityName": "Root"}))["children"]) == ["B", "A"]


async def test_a_deep_chain_is_cut_at_the_depth_setting_and_says_so(settings: Settings, graph: GraphBackend) -> None:
    await load_into_graph(graph, read_sources([KNOWLEDGE_SCHEMAS]))
    shallow = settings.model_copy(update={"hierarchy_max_depth": 2})
    async with open_client(shallow, "in_process") as client:
        for i in range(4):
            await person(client, f"n{i}")
        for i in range(3):
            await parent(client, f"n{i + 1}", f"n{i}")
        up = await ok(client, "get_ancestors", {"entityName": "n3"})
        assert (names(up["ancestors"]), up["depth_truncated"]) == (["n2", "n1"], True)
        down = await ok(client, "get_descendants", {"entityName": "n1"})
        assert (names(down["descendants"]), down["depth_truncated"]) == (["n2", "n3"], False)
        cut = await ok(client, "get_subtree", {"entityName": "n0"})
        assert (sorted(names(cut["entities"])), cut["depth_truncated"]) == (["n0", "n1", "n2"], True)
        # The cycle check is not bounded by the depth: n0 is n3's ancestor three steps up.
        refusal = await rejected(client, "set_entity_parent", {"entityName": "n0", "parentName": "n3"})
        assert refusal["error_code"] == "HIERARCHY_CYCLE"


async def test_the_memory_profile_offers_the_hierarchy(settings: Settings, graph: GraphBackend) -> None:
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "memory"]))
    async with open_client(settings, "in_process", profile="memory") as memory:
        people = [{"name": n, "entityType": "person", "observations": []} for n in ("Ada", "Math")]
        await ok(memory, "create_entities", {"entities": people})
        await ok(memory, "set_entity_parent", {"entityName": "Ada", "parentName": "Math"})
        assert names((await ok(memory, "get_children", {"entityName": "Math"}))["children"]) == ["Ada"]


async def test_the_grant_holds_for_the_hierarchy_type_labels_and_the_archive(
    settings: Settings, graph: GraphBackend, tmp_path: Path
) -> None:
    await load_into_graph(graph, read_sources([KNOWLEDGE_SCHEMAS]))
    async with open_client(settings, "in_process") as gate:
        for name in ("Ada", "Math"):
            await person(gate, name)
    # Every toolset listed: what the grant hides is what it does not allow.
    grant = Grant(tools=("read", "write"), relationship_types=("KNOWS",))
    writer = limited_agent(every_toolset(settings), tmp_path, grant)
    async with open_client(writer, "in_process") as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        assert "set_entity_parent" in listed and "archive_entities" not in listed and "restore_entities" not in listed
        denied = await rejected(client, "set_entity_parent", {"entityName": "Ada", "parentName": "Math"})
        assert (denied["error_code"], denied["details"]["relationship_types"]) == ("PERMISSION_DENIED", ["CHILD_OF"])
        assert (await rejected(client, "archive_entities", {"tags": ["x"]}))["error_code"] == "PERMISSION_DENIED"
    labels_only = limited_agent(settings, tmp_path, Grant(labels=("Project",)))
    async with open_client(labels_only, "in_process") as client:
        denied = await rejected(client, "add_tags", {"entityName": "Ada", "tags": ["x"]})
        assert (denied["error_code"], denied["details"]["labels"]) == ("PERMISSION_DENIED", ["Person"])
    assert await child_of(graph) == set()


@pytest.mark.every_transport
async def test_the_knowledge_tools_answer_over_both_transports(
    settings: Settings, graph: GraphBackend, transport: str
) -> None:
    await load_into_graph(graph, read_sources([KNOWLEDGE_SCHEMAS]))
    async with open_client(settings, transport) as client:
        for name in ("Ada", "Math"):
            await person(client, name)
        await parent(client, "Ada", "Math")
        await ok(client, "add_tags", {"entityName": "Ada", "tags": ["Pioneer"]})
        up = await ok(client, "get_ancestors", {"entityName": "Ada"})
        assert names(up["ancestors"]) == ["Math"]
        assert (await ok(client, "archive_entities", {"tags": ["pioneer"]}))["entityNames"] == ["Ada"]
        assert (await ok(client, "get_children", {"entityName": "Math"}))["children"] == []


async def test_a_renamed_hierarchy_type_is_the_one_imports_and_exports_use(
    settings: Settings, graph: GraphBackend
) -> None:
    """WRITE_GATE_HIERARCHY_TYPE names a registered type (here KNOWS): set_entity_parent writes it, memory-mcp's
    parentId imports as it, and the export's parentId reads it back; no CHILD_OF is written anywhere."""
    await load_into_graph(graph, read_sources([KNOWLEDGE_SCHEMAS]))
    renamed = settings.model_copy(update={"hierarchy_type": "KNOWS"})
    document = {
        "entities": [
            {"name": "Europe", "entityType": "Entity", "observations": []},
            {"name": "France", "entityType": "Entity", "observations": [], "parentId": "Europe"},
        ],
        "relations": [],
    }
    async with open_client(renamed, "in_process") as client:
        await ok(client, "import_graph", {"format": "json", "data": json.dumps(document)})
        await person(client, "Ada")
        await person(client, "Math")
        await parent(client, "Ada", "Math")
        assert (await ok(client, "get_parent", {"entityName": "France"}))["parent"]["name"] == "Europe"
        exported = json.loads((await ok(client, "export_graph", {"format": "json"}))["content"])
    parents = {e["name"]: e.get("parentId") for e in exported["entities"]}
    assert (parents["France"], parents["Ada"], parents["Europe"]) == ("Europe", "Math", None)
    types = await graph.read(Statement("MATCH ()-[r]->() RETURN DISTINCT type(r) AS t"))
    assert {row["t"] for row in types} == {"KNOWS"}


def link(child: str, of: str) -> dict[str, Any]:
    ends = {"from_label": "Person", "from_keys": {"name": child}, "to_label": "Person", "to_keys": {"name": of}}
    return {"type": "CHILD_OF", **ends, "source": "test", "extraction_method": "manual"}


def assert_a_forest(links: set[tuple[str, str]]) -> None:
    """One parent per child, and following parents never comes back."""
    parents = dict(links)
    assert len(parents) == len(links), links
    for child in parents:
        seen, at = {child}, child
        while at in parents:
            at = parents[at]
            assert at not in seen, links
            seen.add(at)


async def test_every_tool_that_writes_the_hierarchy_type_keeps_one_parent_and_no_cycle(
    gate: Client, settings: Settings, graph: GraphBackend
) -> None:
    """write_relationship, write_relationships, the memory profile's create_relations and import_graph's parentId
    write CHILD_OF too: a link that would give a child a second parent (CONFLICT, reason one_parent) or make a
    cycle (HIERARCHY_CYCLE) is refused by each, and set_entity_parent still moves a child. They all wrote it
    (a1 had two parents, a cycle root > a > a1 > root held)."""
    await tree(gate)
    await person(gate, "c")
    await person(gate, "d")
    assert (await ok(gate, "write_relationship", link("a1", "a")))["type"] == "CHILD_OF"  # the link it has: fine
    second = await rejected(gate, "write_relationship", link("a1", "b"))
    assert (second["error_code"], second["details"]["reason"]) == ("CONFLICT", "one_parent")
    for child, of in (("root", "a11"), ("a", "a")):
        assert (await rejected(gate, "write_relationship", link(child, of)))["error_code"] == "HIERARCHY_CYCLE"
    batch = await ok(gate, "write_nodes", {"items": []})  # nothing: a batch of none is fine
    assert batch["written"] == 0
    batch = await ok(gate, "write_relationships", {"items": [link("a2", "b"), link("root", "a1"), link("c", "b")]})
    assert [(i["status"], i.get("error_code")) for i in batch["items"]] == [
        ("rejected", "CONFLICT"),
        ("rejected", "HIERARCHY_CYCLE"),
        ("written", None),
    ]
    async with open_client(settings, "in_process", profile="memory") as memory:
        relations = [{"from": "a11", "to": "root", "relationType": "CHILD_OF"}]
        refused = await rejected(memory, "create_relations", {"relations": relations})
        assert refused["error_code"] == "CONFLICT"
        twice = [
            {"from": "d", "to": "b", "relationType": "CHILD_OF"},
            {"from": "d", "to": "c", "relationType": "CHILD_OF"},
        ]
        assert (await rejected(memory, "create_relations", {"relations": twice}))["error_code"] == "CONFLICT"
        cyclic = [{"from": "root", "to": "a2", "relationType": "CHILD_OF"}]
        assert (await rejected(memory, "create_relations", {"relations": cyclic}))["error_code"] == "HIERARCHY_CYCLE"
    document = {"entities": [{"name": "a2", "entityType": "Person", "observations": [], "parentId": "c"}]}
    imported = await ok(gate, "import_graph", {"format": "json", "data": json.dumps(document)})
    assert [e["error_code"] for e in imported["errors"]] == ["CONFLICT"]
    await parent(gate, "a1", "b")  # set_entity_parent moves it
    links = await child_of(graph)
    assert ("a1", "b") in links and ("c", "b") in links and not any(child == "d" for child, _ in links)
    assert_a_forest(links)


async def test_racing_writes_of_the_hierarchy_type_keep_one_parent_and_no_cycle(
    gate: Client, settings: Settings, graph: GraphBackend
) -> None:
    """Two sessions at once, each through write_relationship: x to y against y to x (one cycle), and z to p1
    against z to p2 (two parents). One of each pair is written; the other says why."""
    for name in ("x", "y", "z", "p1", "p2"):
        await person(gate, name)
    codes: list[str | None] = []

    async def attempt(client: Client, child: str, of: str) -> None:
        result = await client.call_tool("write_relationship", link(child, of))
        codes.append(result.structured_content["error_code"] if result.is_error else None)

    async with open_client(settings, "in_process") as other, anyio.create_task_group() as tg:
        for client, (child, of) in ((gate, ("x", "y")), (other, ("y", "x")), (gate, ("z", "p1")), (other, ("z", "p2"))):
            tg.start_soon(attempt, client, child, of)
    assert sorted(codes, key=str) == ["CONFLICT", "HIERARCHY_CYCLE", None, None]
    links = await child_of(graph)
    assert len(links) == 2
    assert_a_forest(links)


def merge(survivor: str, *merged: str) -> dict[str, Any]:
    node = {"label": "Person"}
    return {
        "survivor": {**node, "merge_keys": {"name": survivor}},
        "merged": [{**node, "merge_keys": {"name": name}} for name in merged],
    }


async def test_a_merge_that_would_break_the_hierarchy_is_refused_before_anything_is_merged(
    gate: Client, graph: GraphBackend
) -> None:
    """The survivor takes every link of the nodes merged into it: two with other parents would leave it two
    (CONFLICT, one_parent), and one under another would fold their path into a cycle (HIERARCHY_CYCLE). Merges
    that keep one parent go through: both with one parent, or one with none."""
    await tree(gate)
    for name in ("loose", "twin"):
        await person(gate, name)
    await parent(gate, "twin", "a")
    before = await child_of(graph)
    for survivor, *merged in (("a2", "b"), ("b", "loose", "a1")):  # parents a and root: two
        refused = await rejected(gate, "merge_entities", merge(survivor, *merged))
        assert (refused["error_code"], refused["details"]["reason"]) == ("CONFLICT", "one_parent"), survivor
    for survivor, merged in (("root", "a11"), ("a1", "a"), ("a11", "root")):  # one under the other
        assert (await rejected(gate, "merge_entities", merge(survivor, merged)))["error_code"] == "HIERARCHY_CYCLE"
    assert await child_of(graph) == before  # nothing was merged
    await ok(gate, "merge_entities", merge("a2", "twin"))  # one parent between them: a
    await ok(gate, "merge_entities", merge("loose", "b"))  # loose had none: it takes b's, root
    links = await child_of(graph)
    assert ("a2", "a") in links and ("loose", "root") in links
    assert_a_forest(links)

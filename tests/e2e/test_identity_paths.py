"""Merge-key identity with generated names on the paths test_identity.py leaves out: the memory profile's
relations and reads, both Unicode normalisation forms side by side, the typed tools (their by-name target
lookup included) and `write-gate import` / `export`. Every engine tier, through a real MCP client session."""

import itertools
import json
import unicodedata
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from mcp import Client

from tests.conftest import TESTS, open_client, run_write_gate, settings_env
from tests.e2e.test_identity import names, nodes_named, ok
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

FEW = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
MESH_PROV = {"source": "identity-test", "extraction_method": "manual", "reliability": 0.8}
# Text whose NFC and NFD forms differ (a precomposed letter, or a base and a combining mark).
composed = st.text(alphabet="aeÉéÅåñç \u0301\u030a", min_size=1, max_size=8).filter(
    lambda s: unicodedata.normalize("NFC", s) != unicodedata.normalize("NFD", s)
)


@pytest.fixture
async def memory(settings: Settings, graph: GraphBackend) -> AsyncIterator[Client]:
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "memory"]))
    async with open_client(settings, "in_process", profile="memory") as client:
        yield client


@pytest.fixture
async def mesh(settings: Settings, graph: GraphBackend) -> AsyncIterator[Client]:
    """MemoryMesh-shaped files beside the memory registry (its fallback Entity takes stubs)."""
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "memorymesh", TESTS / "schemas" / "memory"]))
    async with open_client(settings, "in_process") as client:
        yield client


async def wipe(graph: GraphBackend) -> None:
    """Examples share the test's graph: each starts without data (every node with a `_key`; registry nodes have
    none)."""
    await graph.write(Statement("MATCH (n) WHERE n._key IS NOT NULL DETACH DELETE n"))


async def whole_graph(client: Client) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    entities, relations, cursor = [], [], None
    while True:
        page = await ok(client, "read_graph", limit=1000, **({"cursor": cursor} if cursor else {}))
        entities += page["entities"]
        relations += page["relations"]
        if (cursor := page["next_cursor"]) is None:
            return entities, relations


async def found_by_search(client: Client, query: str) -> list[str]:
    hits, cursor = [], None
    while True:
        page = await ok(client, "search_nodes", query=query, limit=1000, **({"cursor": cursor} if cursor else {}))
        hits += [e["name"] for e in page["entities"]]
        if (cursor := page["next_cursor"]) is None:
            return hits


def rel(a: str, b: str, type_: str = "knows") -> dict[str, str]:
    return {"from": a, "to": b, "relationType": type_}


@FEW
@given(a=names, b=names)
@example(a=" Spaced ", b="")
@example(a=unicodedata.normalize("NFD", "Émile"), b="\x01ctl")
async def test_memory_relations_and_reads_find_generated_names(
    memory: Client, graph: GraphBackend, a: str, b: str
) -> None:
    assume(a != b)
    await wipe(graph)
    # One name twice in one call is one entity, whatever the name.
    person = {"name": a, "entityType": "person"}
    out = await ok(memory, "create_entities", entities=[person, person, {"name": b, "entityType": "company"}])
    assert [e["name"] for e in out["entities"]] == [a, b] and out["skipped"] == [a]
    assert await nodes_named(graph, a) == 1 and await nodes_named(graph, b) == 1

    # A relation between them, twice in one call and again: one relation, KNOWS.
    out = await ok(memory, "create_relations", relations=[rel(a, b), rel(a, b)])
    assert out["relations"] == [rel(a, b, "KNOWS")]
    assert (await ok(memory, "create_relations", relations=[rel(a, b)]))["relations"] == []
    entities, relations = await whole_graph(memory)
    assert sorted(e["name"] for e in entities) == sorted([a, b])
    assert [(r["from"], r["to"], r["relationType"]) for r in relations] == [(a, b, "KNOWS")]

    # search_nodes finds each by its own name (folding makes the query no narrower than the name).
    for name in (a, b):
        assert name in await found_by_search(memory, name)
    opened = await ok(memory, "open_nodes", names=[a])
    assert [e["name"] for e in opened["entities"]] == [a] and len(opened["relations"]) == 1

    # delete_relations reaches the relation by the two names; the entities stay.
    await ok(memory, "delete_relations", relations=[rel(a, b)])
    entities, relations = await whole_graph(memory)
    assert relations == [] and len(entities) == 2
    await ok(memory, "delete_entities", entityNames=[a, b])
    assert await nodes_named(graph, a) == 0 and await nodes_named(graph, b) == 0


@FEW
@given(text=composed)
@example(text="Émile")
async def test_nfc_and_nfd_forms_are_two_entities(memory: Client, graph: GraphBackend, text: str) -> None:
    """As in the official server, which compares names as JavaScript strings: code unit by code unit."""
    nfc, nfd = unicodedata.normalize("NFC", text), unicodedata.normalize("NFD", text)
    await wipe(graph)
    out = await ok(memory, "create_entities", entities=[{"name": nfc, "entityType": "person"}])
    assert [e["name"] for e in out["entities"]] == [nfc]
    out = await ok(memory, "create_entities", entities=[{"name": nfd, "entityType": "person", "observations": ["d"]}])
    assert [e["name"] for e in out["entities"]] == [nfd]
    assert await nodes_named(graph, nfc) == 1 and await nodes_named(graph, nfd) == 1
    for name, observations in ((nfc, []), (nfd, ["d"])):
        [entity] = (await ok(memory, "open_nodes", names=[name]))["entities"]
        assert entity["name"] == name and entity["observations"] == observations
    await ok(memory, "delete_entities", entityNames=[nfc])
    assert await nodes_named(graph, nfc) == 0 and await nodes_named(graph, nfd) == 1
    await ok(memory, "delete_entities", entityNames=[nfd])
    # Side by side in one call: two entities as well.
    both = [{"name": nfc, "entityType": "person"}, {"name": nfd, "entityType": "person"}]
    assert len((await ok(memory, "create_entities", entities=both))["entities"]) == 2
    await ok(memory, "delete_entities", entityNames=[nfc, nfd])
    assert await nodes_named(graph, nfc) == 0 and await nodes_named(graph, nfd) == 0


async def typed(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, (tool, result.structured_content)
    return result.structured_content


@FEW
@given(place=names, who=names)
@example(place=" Spaced ", who=" ")
@example(place=unicodedata.normalize("NFD", "Émile"), who="x" * 5000)
async def test_typed_tools_find_generated_names(mesh: Client, graph: GraphBackend, place: str, who: str) -> None:
    stub_name = place + "?"
    assume(len({place, who, stub_name}) == 3)
    assume("" not in (place, who))  # MemoryMesh's tools refuse an empty name (test_mesh_profile), as add_nodes does
    await wipe(graph)
    location = {"location": {"name": place, "type": "Town"}, **MESH_PROV}
    await typed(mesh, "add_location", location)
    await typed(mesh, "add_location", location)  # an add of the same key writes the one node again
    out = await typed(mesh, "update_location", {"location": {"name": place, "notableFeatures": ["well"]}, **MESH_PROV})
    assert out["merge_keys"] == {"name": place}
    assert await nodes_named(graph, place) == 1

    # currentLocation has no nodeType: the target is found by its name (find_targets), not stubbed.
    npc = {"npc": {"name": who, "role": "Ranger", "status": "Active", "currentLocation": place}, **MESH_PROV}
    out = await typed(mesh, "add_npc", npc)
    assert [(r["to_label"], r["to"], r["stub"]) for r in out["relationships"]] == [("Location", place, False)]
    out = await typed(mesh, "update_npc", {"npc": {"name": who, "currentLocation": place}, **MESH_PROV})
    assert out["relationships"][0]["stub"] is False
    assert await nodes_named(graph, place) == 1 and await nodes_named(graph, who) == 1

    # Missing: a stub under the fallback label, found by name from then on (no second stub).
    update = {"npc": {"name": who, "home": stub_name}, **MESH_PROV, "endpoint_policy": "merge_endpoints"}
    assert (await typed(mesh, "update_npc", update))["relationships"][0]["stub"] is True
    assert (await typed(mesh, "update_npc", update))["relationships"][0]["to_label"] == "Entity"
    assert await nodes_named(graph, stub_name) == 1

    for tool, name in (("delete_npc", who), ("delete_location", place)):
        out = await typed(mesh, tool, {tool.removeprefix("delete_"): {"name": name}})
        assert out["merge_keys"] == {"name": name}
        again = await mesh.call_tool(tool, {tool.removeprefix("delete_"): {"name": name}})
        assert again.is_error and again.structured_content["error_code"] == "ENTITY_NOT_FOUND"
        assert await nodes_named(graph, name) == 0
    await typed(mesh, "write_node", {"label": "Entity", "merge_keys": {"name": stub_name}, **MESH_PROV})
    assert await nodes_named(graph, stub_name) == 1  # the stub, claimed: still one node

    # allies names its nodeType: the target is that label's node of the name, its stub made once.
    faction = {"name": place, "alignment": "Good", "allies": [who]}
    for _ in range(2):
        out = await typed(mesh, "add_faction", {"faction": faction, **MESH_PROV, "endpoint_policy": "merge_endpoints"})
        assert [(r["to_label"], r["to"]) for r in out["relationships"]] == [("Faction", who)]
    assert await nodes_named(graph, place) == 1 and await nodes_named(graph, who) == 1


async def cli(settings: Settings, *args: str) -> str:
    """`write-gate ARGS`, in process; what it printed on stderr."""
    done = await anyio.to_thread.run_sync(lambda: run_write_gate(*args, env=settings_env(settings)))
    assert done.returncode == 0, done.stderr
    return done.stderr


def records_keys(line: dict) -> tuple[str, ...]:
    official = ("type", "name", "entityType", "observations") if line["type"] == "entity" else None
    return official or ("type", "from", "to", "relationType")


# The hard names always, beside a few drawn ones: each example runs three `write-gate` commands.
HARD = [" Spaced ", "", "Émile", unicodedata.normalize("NFD", "Émile"), "\x01ctl", "x" * 5000]


@settings(max_examples=1, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=st.lists(names, max_size=6, unique=True))
async def test_import_and_export_keep_generated_names(
    settings: Settings, memory: Client, graph: GraphBackend, tmp_path_factory: pytest.TempPathFactory, drawn: list[str]
) -> None:
    batch = list(dict.fromkeys(HARD + drawn))
    await wipe(graph)
    folder = tmp_path_factory.mktemp("import")
    records = [
        {"type": "entity", "name": n, "entityType": "Person", "observations": [f"#{i}"]} for i, n in enumerate(batch)
    ]
    records += [{"type": "relation", "from": a, "to": b, "relationType": "KNOWS"} for a, b in itertools.pairwise(batch)]
    source = folder / "memory.jsonl"
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")

    report = await cli(settings, "import", str(source), "--quiet", "--no-migrate")
    assert f"entities: {len(batch)} were created" in report
    for i, name in enumerate(batch):
        [entity] = (await ok(memory, "open_nodes", names=[name]))["entities"]
        assert (entity["name"], entity["observations"]) == (name, [f"#{i}"])
    assert "were created, " + str(len(batch)) + " skipped" in await cli(
        settings, "import", str(source), "--quiet", "--no-migrate"
    )

    exported = folder / "out.jsonl"
    await cli(settings, "export", "--format", "jsonl", "--output", str(exported))
    # The official server's keys of each line, which come first (the gate adds ids, provenance and the like).
    lines = [
        {key: line[key] for key in records_keys(line)}
        for line in map(json.loads, Path(exported).read_text(encoding="utf-8").splitlines())
    ]
    canonical = sorted(json.dumps(r, sort_keys=True) for r in records)
    assert sorted(json.dumps(line, sort_keys=True) for line in lines) == canonical
    await ok(memory, "delete_entities", entityNames=batch)
    assert [await nodes_named(graph, n) for n in batch] == [0] * len(batch)

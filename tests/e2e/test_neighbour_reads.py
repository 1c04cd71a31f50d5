"""MemoryMesh's neighbour-inclusive reads (seed 000: "neighbor-inclusive queries", tests 14.3) in the gate profile,
the official answers (seed 001) in the memory profile, and `neighbors` choosing either way; through real MCP client
sessions on every engine tier. The neighbours come from the statement that reads the relations: no round trip
more, and bounded per entity as the relations are."""

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from tests.conftest import TESTS, ok, open_client
from tests.e2e.test_round_trips import Counted
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources
from write_gate.surface.server import build_server

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

MEMORYMESH = TESTS / "schemas" / "memorymesh"
PROV = {"source": "campaign-log", "extraction_method": "manual"}


def names(answer: dict[str, Any]) -> list[str]:
    return [entity["name"] for entity in answer["entities"]]


def edges(answer: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(r["from"], r["relationType"], r["to"]) for r in answer["relations"]]


@pytest.fixture
async def middle_earth(settings: Settings, graph: GraphBackend) -> AsyncIterator[Client]:
    """MemoryMesh's own schema files, written through their typed tools: Frodo -> Mordor -> Gondor."""
    await load_into_graph(graph, read_sources([MEMORYMESH]))
    async with open_client(settings, "in_process") as client:
        await ok(client, "add_location", {"location": {"name": "Gondor", "type": "City"}, **PROV})
        mordor = {"name": "Mordor", "type": "Wilderness", "parentLocation": "Gondor"}
        await ok(client, "add_location", {"location": mordor, **PROV})
        frodo = {"name": "Frodo", "role": "Ranger", "status": "Active", "currentLocation": "Mordor"}
        await ok(client, "add_npc", {"npc": frodo, **PROV})
        yield client


async def test_open_and_search_answer_frodo_and_mordor_not_gondor(middle_earth: Client) -> None:
    for tool, args in (("open_nodes", {"names": ["Frodo"]}), ("search_nodes", {"query": "frodo"})):
        answer = await ok(middle_earth, tool, args)
        assert names(answer) == ["Frodo", "Mordor"], tool
        assert edges(answer) == [("Frodo", "LOCATED_IN", "Mordor")], tool
        [mordor] = [e for e in answer["entities"] if e["name"] == "Mordor"]
        assert (mordor["entityType"], mordor["properties"]["type"]) == ("Location", "Wilderness")  # a whole entity
        official = await ok(middle_earth, tool, {**args, "neighbors": False})
        assert names(official) == ["Frodo"] and edges(official) == edges(answer)


async def people(client: Client, *links: tuple[str, str]) -> None:
    """Seed 14.3's nodes A, B and C, and the relations given (KNOWS)."""
    for name in ("A", "B", "C"):
        node = {"label": "Person", "merge_keys": {"name": name}, "properties": {"note": f"node {name}"}, **PROV}
        await ok(client, "write_node", node)
    for start, end in links:
        rel = {"type": "KNOWS", "from_label": "Person", "from_keys": {"name": start}, "to_label": "Person"}
        await ok(client, "write_relationship", {**rel, "to_keys": {"name": end}, **PROV})


async def test_seed_000_14_3_search_and_open_return_neighbours(settings: Settings, matrix_graph: GraphBackend) -> None:
    async with open_client(settings, "in_process") as gate:
        await people(gate, ("A", "B"))
        found = await ok(gate, "search_nodes", {"query": "node a"})  # matches only A
        assert (names(found), edges(found)) == (["A", "B"], [("A", "KNOWS", "B")])
        await people(gate, ("B", "C"))
        opened = await ok(gate, "open_nodes", {"names": ["A"]})
        assert (names(opened), edges(opened)) == (["A", "B"], [("A", "KNOWS", "B")])
        # B matched: both its neighbours, and both its relations, once each.
        opened = await ok(gate, "open_nodes", {"names": ["B"]})
        assert (names(opened), edges(opened)) == (["B", "A", "C"], [("A", "KNOWS", "B"), ("B", "KNOWS", "C")])


async def test_the_memory_profile_keeps_the_official_answers_unless_asked(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    async with open_client(settings, "in_process") as gate, open_client(settings, "in_process", "memory") as memory:
        await people(gate, ("A", "B"), ("B", "C"))
        for tool, args in (("open_nodes", {"names": ["A"]}), ("search_nodes", {"query": "node a"})):
            official = await ok(memory, tool, args)
            assert (names(official), edges(official)) == (["A"], [("A", "KNOWS", "B")]), tool
            asked = await ok(memory, tool, {**args, "neighbors": True})
            assert (names(asked), edges(asked)) == (["A", "B"], [("A", "KNOWS", "B")]), tool


async def test_a_hubs_neighbours_are_bounded_and_paged_with_its_relations(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    spokes = ["S1", "S2", "S3", "S4", "S5"]
    async with open_client(settings, "in_process") as gate:
        for name in ("Hub", *spokes):
            await ok(gate, "write_node", {"label": "Person", "merge_keys": {"name": name}, **PROV})
        rel = {"type": "KNOWS", "from_label": "Person", "from_keys": {"name": "Hub"}, "to_label": "Person"}
        for spoke in spokes:
            await ok(gate, "write_relationship", {**rel, "to_keys": {"name": spoke}, **PROV})
        seen, cursor = [], None
        for _ in range(4):  # bounded: a cursor that never ends fails here
            args = {"names": ["Hub"], "relations_limit": 2, **({"cursor": cursor} if cursor else {})}
            page = await ok(gate, "open_nodes", args)
            hub, *neighbours = names(page)
            assert hub == "Hub" and neighbours == [to for _, _, to in edges(page)] and len(neighbours) <= 2
            seen += neighbours
            if (cursor := page["next_cursor"]) is None:
                break
        assert seen == spokes and cursor is None


async def test_neighbours_cost_no_round_trip_more(settings: Settings, matrix_graph: GraphBackend) -> None:
    # The gate's own polls would be counted too: at the production interval, none falls in the test.
    quiet = settings.model_copy(update={"registry_poll_seconds": 3600, "change_poll_seconds": 3600})
    server = build_server(quiet, auto_migrate=False)
    async with Client(server) as gate:
        await people(gate, ("A", "B"), ("B", "C"))
        counted = Counted(server.services.gate.backend)  # type: ignore[attr-defined]
        sent = {}
        for neighbors in (False, True):
            for tool, args in (("open_nodes", {"names": ["B"]}), ("search_nodes", {"query": "node b"})):
                before = counted.statements
                await ok(gate, tool, {**args, "neighbors": neighbors})
                sent[(tool, neighbors)] = counted.statements - before
    assert sent[("open_nodes", True)] == sent[("open_nodes", False)]
    # A page from the labels' trigram indexes (with, on FalkorDB, whether they answer completely), then its
    # relations: the neighbours come with the relations.
    assert sent[("search_nodes", True)] == sent[("search_nodes", False)] == 2

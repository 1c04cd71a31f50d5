"""MemoryMesh's static graph tools (seed 000, section 6: add/update/delete nodes and edges, add/delete metadata)
through a real MCP client session on every engine tier, with MemoryMesh's own schema files loaded: its checks
(unique names and edges, existing endpoints, weights in [0, 1] averaged on update), the gate's (the registry's
types, required fields and enums read from "Key: Value" metadata, provenance), and one graph for every
profile's reads."""

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.conftest import CLIENT_NAME, MATRIX_SCHEMAS, TESTS, hint, ok, open_client, rejected
from tests.e2e import readme_blocks as rb
from tests.e2e.test_memorymesh_files import MEMORYMESH, count
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

MESH = {"add_nodes", "update_nodes", "delete_nodes", "add_edges", "update_edges", "delete_edges"} | {
    "add_metadata",
    "delete_metadata",
}
# The docs page's own example (docs/tools/mesh-tools.md), which these tests run.
[GANDALF] = json.loads(rb.block("call:add_nodes#mesh").text)["nodes"]
RIVENDELL = {"name": "Rivendell", "nodeType": "location", "metadata": ["Type: Town", "Region: Eriador"]}


@pytest.fixture
async def world(settings: Settings, graph: GraphBackend) -> AsyncIterator[Client]:
    """MemoryMesh's files beside a registry with Person, Organization and the fallback Entity; the mesh set listed."""
    await load_into_graph(graph, read_sources([MEMORYMESH, MATRIX_SCHEMAS]))
    async with open_client(settings.model_copy(update={"toolsets": "mesh"}), "in_process") as client:
        yield client


async def nodes(graph: GraphBackend, name: str) -> int:
    return await count(graph, "MATCH (n {name: $name}) RETURN count(n) AS c", name=name)


async def test_the_mesh_set_is_listed_when_asked_and_states_its_hints(settings: Settings, world: Client) -> None:
    tools = {t.name: t for t in (await world.list_tools()).tools}
    assert tools.keys() >= MESH
    assert hint(tools["add_nodes"].annotations, "idempotent_hint") is False  # a repeat is refused
    assert hint(tools["update_edges"].annotations, "idempotent_hint") is False  # a repeat moves the weight
    assert hint(tools["delete_edges"].annotations, "destructive_hint") is True
    assert hint(tools["add_metadata"].annotations, "destructive_hint") is False
    for profile in ("gate", "memory"):
        async with open_client(settings, "in_process", profile) as plain:
            assert not {t.name for t in (await plain.list_tools()).tools} & MESH


async def test_add_nodes_reads_declared_fields_from_metadata_and_keeps_it_all(world: Client) -> None:
    out = await ok(world, "add_nodes", {"nodes": [GANDALF, RIVENDELL]})
    assert out["data"]["nodes"] == [
        {"name": "Gandalf", "nodeType": "npc", "metadata": GANDALF["metadata"]},
        {"name": "Rivendell", "nodeType": "location", "metadata": RIVENDELL["metadata"]},
    ]
    assert out["actionTaken"] == "Added nodes: Gandalf, Rivendell" and out["timestamp"].endswith("Z")
    [gandalf] = (await ok(world, "open_nodes", {"names": ["Gandalf"]}))["entities"]
    assert gandalf["observations"] == GANDALF["metadata"]
    props = gandalf["properties"]
    assert (props["role"], props["status"]) == ("Wizard", "Active")
    # Stamped as the memory profile's writes are: the client's name, an LLM's guess.
    assert (props["source"], props["extraction_method"]) == (CLIENT_NAME, "llm")


async def test_add_nodes_refuses_what_the_registry_refuses(world: Client, graph: GraphBackend) -> None:
    missing = await rejected(world, "add_nodes", {"nodes": [{"name": "Bilbo", "nodeType": "npc", "metadata": []}]})
    assert missing["error_code"] == "SCHEMA_MISSING_REQUIRED_PROPERTY"
    dragon = {"name": "Smaug", "nodeType": "npc", "metadata": ["Role: Dragon", "Status: Sleeping"]}
    assert (await rejected(world, "add_nodes", {"nodes": [dragon]}))["error_code"] == "SCHEMA_TYPE_MISMATCH"
    twice = {"name": "Smaug", "nodeType": "npc", "metadata": ["Role: Dragon", "Status: Active", "status: Missing"]}
    refused = await rejected(world, "add_nodes", {"nodes": [twice]})
    assert refused["details"]["reason"] == "property_given_twice"
    empty = await rejected(world, "add_nodes", {"nodes": [{"name": "", "nodeType": "npc"}]})
    assert empty["error_code"] == "INVALID_INPUT"
    assert await nodes(graph, "Bilbo") + await nodes(graph, "Smaug") == 0
    # An unknown type takes the registry's fallback, as the memory profile's entityType does; the answer names the
    # type as given, as MemoryMesh keeps it.
    out = await ok(world, "add_nodes", {"nodes": [{"name": "Shire", "nodeType": "region", "metadata": []}]})
    assert out["data"]["nodes"][0]["nodeType"] == "region"
    assert await count(graph, "MATCH (n:Entity {name: $name}) RETURN count(n) AS c", name="Shire") == 1


async def test_a_name_that_exists_refuses_the_whole_call(world: Client, graph: GraphBackend) -> None:
    await ok(world, "add_nodes", {"nodes": [GANDALF]})
    frodo = {"name": "Frodo", "nodeType": "npc", "metadata": ["Role: Hobbit", "Status: Active"]}
    refused = await rejected(world, "add_nodes", {"nodes": [frodo, {**GANDALF, "nodeType": "location"}]})
    assert refused["error_code"] == "ALREADY_EXISTS" and refused["details"]["names"] == ["Gandalf"]
    assert "Gandalf" in refused["message"]
    assert await nodes(graph, "Frodo") == 0 and await nodes(graph, "Gandalf") == 1
    given_twice = await rejected(world, "add_nodes", {"nodes": [frodo, frodo]})
    assert given_twice["details"]["reason"] == "given_twice"


async def test_metadata_is_added_once_and_deleted_exactly(world: Client) -> None:
    await ok(world, "add_nodes", {"nodes": [GANDALF]})
    added = await ok(world, "add_metadata", {"nodeName": "Gandalf", "metadata": ["Mood: Grumpy", "Role: Wizard"]})
    assert added["data"] == {"nodeName": "Gandalf", "metadata": ["Mood: Grumpy"]}
    await ok(world, "delete_metadata", {"nodeName": "Gandalf", "metadata": ["Likes pipe-weed", "Not there"]})
    [gandalf] = (await ok(world, "open_nodes", {"names": ["Gandalf"]}))["entities"]
    assert gandalf["observations"] == ["Role: Wizard", "Status: Active", "Mood: Grumpy"]
    for tool in ("add_metadata", "delete_metadata"):
        refused = await rejected(world, tool, {"nodeName": "Saruman", "metadata": ["Role: Wizard"]})
        assert refused["error_code"] == "ENTITY_NOT_FOUND"


async def test_update_nodes_replaces_metadata_and_keeps_each_node_its_type(world: Client) -> None:
    await ok(world, "add_nodes", {"nodes": [GANDALF, RIVENDELL]})
    update = {"name": "Gandalf", "nodeType": "NPC", "metadata": ["Role: Wizard", "Status: Missing"]}
    out = await ok(world, "update_nodes", {"nodes": [update]})
    assert out["data"]["nodes"] == [{"name": "Gandalf", "nodeType": "npc", "metadata": update["metadata"]}]
    [gandalf] = (await ok(world, "open_nodes", {"names": ["Gandalf"]}))["entities"]
    assert gandalf["properties"]["status"] == "Missing" and gandalf["observations"] == update["metadata"]
    relabel = await rejected(world, "update_nodes", {"nodes": [{"name": "Gandalf", "nodeType": "location"}]})
    assert relabel["details"] | {"reason": "type_change", "current": "Npc", "asked": "Location"} == relabel["details"]
    # One missing node: nothing is written, the node that exists included.
    both = [{"name": "Rivendell", "metadata": ["Type: City"]}, {"name": "Lorien", "metadata": []}]
    assert (await rejected(world, "update_nodes", {"nodes": both}))["error_code"] == "ENTITY_NOT_FOUND"
    [rivendell] = (await ok(world, "open_nodes", {"names": ["Rivendell"]}))["entities"]
    assert rivendell["properties"]["type"] == "Town"


async def test_update_nodes_replaces_metadata_where_the_registry_declares_observations(
    settings: Settings, graph: GraphBackend
) -> None:
    """Seed 000, 4.2: metadata given replaces the whole array, for a type without a MemoryMesh schema file too. A
    registry entry declaring `observations` (as the bundled core registry's do) once made the update drop it."""
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "memory"]))
    async with open_client(settings.model_copy(update={"toolsets": "mesh"}), "in_process") as client:
        added = [
            {"name": "Alice", "nodeType": "person", "metadata": ["Age: 30"]},
            {"name": "Widget", "nodeType": "thing", "metadata": ["Colour: red"]},
        ]
        await ok(client, "add_nodes", {"nodes": added})
        update = [
            {"name": "Alice", "metadata": ["Age: 31", "City: Paris"]},
            {"name": "Widget", "metadata": ["Colour: blue"]},
        ]
        out = await ok(client, "update_nodes", {"nodes": update})
        assert [n["metadata"] for n in out["data"]["nodes"]] == [u["metadata"] for u in update]
        opened = await ok(client, "open_nodes", {"names": ["Alice", "Widget"]})
        assert {e["name"]: e["observations"] for e in opened["entities"]} == {u["name"]: u["metadata"] for u in update}
        found = await ok(client, "search_nodes", {"query": "paris"})
        assert [e["name"] for e in found["entities"]] == ["Alice"]


async def test_edges_need_their_nodes_are_unique_and_weigh_in_as_seed_000_says(world: Client) -> None:
    await ok(world, "add_nodes", {"nodes": [GANDALF, RIVENDELL]})
    edge = {"from": "Gandalf", "to": "Rivendell", "edgeType": "located_in"}
    out = await ok(world, "add_edges", {"edges": [edge]})
    assert out["data"]["edges"] == [{**edge, "weight": 1.0}]  # seed 000 14.5: default
    again = await rejected(world, "add_edges", {"edges": [edge]})
    assert again["error_code"] == "ALREADY_EXISTS"
    nowhere = await rejected(world, "add_edges", {"edges": [{**edge, "to": "Mordor"}]})
    assert nowhere["error_code"] == "ENDPOINT_NOT_FOUND"
    heavy = await rejected(world, "add_edges", {"edges": [{**edge, "edgeType": "lives_in", "weight": 1.5}]})
    assert heavy["error_code"] == "INVALID_INPUT"  # seed 000 14.5: out of range
    directed = await rejected(world, "add_edges", {"edges": [{**edge, "edgeType": "directed"}]})
    assert directed["error_code"] == "SCHEMA_UNKNOWN_LABEL"
    await ok(world, "delete_edges", {"edges": [edge]})
    await ok(world, "add_edges", {"edges": [{**edge, "weight": 0.8}]})
    # Seed 000 14.5: (0.8 + 0.6) / 2 = 0.7, under either spelling of the argument.
    moved = await ok(world, "update_edges", {"edges": [{**edge, "weight": 0.6}]})
    assert moved["data"]["edges"][0]["weight"] == pytest.approx(0.7)
    moved = await ok(world, "update_edges", {"edges": [{**edge, "newWeight": 0.9}]})
    assert moved["data"]["edges"][0]["weight"] == pytest.approx(0.8)
    read = await ok(world, "open_nodes", {"names": ["Gandalf"]})
    assert [(r["to"], r["properties"]["weight"]) for r in read["relations"]] == [("Rivendell", pytest.approx(0.8))]
    missing = await rejected(world, "update_edges", {"edges": [{**edge, "edgeType": "lives_in", "weight": 0.5}]})
    assert missing["error_code"] == "RELATION_NOT_FOUND"


async def test_deletes_cascade_and_pass_over_what_is_not_there(world: Client, graph: GraphBackend) -> None:
    await ok(world, "add_nodes", {"nodes": [GANDALF, RIVENDELL]})
    edge = {"from": "Gandalf", "to": "Rivendell", "edgeType": "located_in"}
    await ok(world, "add_edges", {"edges": [{**edge, "weight": 0.3}]})
    gone = await ok(world, "delete_edges", {"edges": [edge, {**edge, "from": "Nobody"}]})
    # Each edge deleted with the weight it had, as add_edges and the reads answered it.
    assert gone["data"]["edges"] == [{**edge, "weight": 0.3}] and gone["actionTaken"] == "Deleted 1 edges"
    assert (await ok(world, "open_nodes", {"names": ["Gandalf"]}))["relations"] == []
    again = await ok(world, "delete_edges", {"edges": [edge]})  # answers what it deleted: nothing
    assert again["data"]["edges"] == [] and again["actionTaken"] == "Deleted 0 edges"
    await ok(world, "add_edges", {"edges": [edge]})
    assert (await ok(world, "delete_edges", {"edges": [edge]}))["data"]["edges"] == [{**edge, "weight": 1.0}]
    await ok(world, "add_edges", {"edges": [edge]})
    await ok(world, "delete_nodes", {"nodeNames": ["Gandalf", "Nobody"]})
    assert await nodes(graph, "Gandalf") == 0
    assert await count(graph, "MATCH ()-[r:LOCATED_IN]->() RETURN count(r) AS c") == 0
    assert await nodes(graph, "Rivendell") == 1


async def test_an_empty_list_is_a_call_that_changes_nothing(world: Client, graph: GraphBackend) -> None:
    """MemoryMesh loops over the list it is given: an empty one is an ordinary answer that writes nothing. A
    metadata call still names its node, which must exist, as with entries."""
    await ok(world, "add_nodes", {"nodes": [GANDALF, RIVENDELL]})
    await ok(world, "add_edges", {"edges": [{"from": "Gandalf", "to": "Rivendell", "edgeType": "located_in"}]})

    async def state() -> tuple[int, str]:
        changes = await count(graph, "MATCH (h:WriteGateChange) RETURN count(h) AS c")
        return changes, await count(graph, "MATCH (n {name: 'Gandalf'}) RETURN n.last_updated AS c")

    before = await state()
    emptied = {
        "add_nodes": ({"nodes": []}, {"nodes": []}),
        "update_nodes": ({"nodes": []}, {"nodes": []}),
        "delete_nodes": ({"nodeNames": []}, {"nodeNames": []}),
        "add_edges": ({"edges": []}, {"edges": []}),
        "update_edges": ({"edges": []}, {"edges": []}),
        "delete_edges": ({"edges": []}, {"edges": []}),
        "add_metadata": ({"nodeName": "Gandalf", "metadata": []}, {"nodeName": "Gandalf", "metadata": []}),
        "delete_metadata": ({"nodeName": "Gandalf", "metadata": []}, {"nodeName": "Gandalf", "metadata": []}),
    }
    for tool, (args, data) in emptied.items():
        assert (await ok(world, tool, args))["data"] == data, tool
    for tool in ("add_metadata", "delete_metadata"):
        missing = await rejected(world, tool, {"nodeName": "Nobody", "metadata": []})
        assert missing["error_code"] == "ENTITY_NOT_FOUND", tool
    assert await state() == before
    assert await nodes(graph, "Gandalf") == 1


async def test_the_memory_profile_reads_what_mesh_tools_wrote(settings: Settings, graph: GraphBackend) -> None:
    """A fleet where some agents talk MemoryMesh and others the official server's tools: one graph."""
    await load_into_graph(graph, read_sources([MEMORYMESH, MATRIX_SCHEMAS]))
    memory = settings.model_copy(update={"toolsets": "mesh"})
    async with open_client(memory, "in_process", "memory") as client:
        await ok(client, "add_nodes", {"nodes": [{"name": "Ada", "nodeType": "person", "metadata": ["Math: yes"]}]})
        await ok(client, "add_observations", {"observations": [{"entityName": "Ada", "contents": ["Poet: no"]}]})
        read: dict[str, Any] = await ok(client, "open_nodes", {"names": ["Ada"]})
        [ada] = read["entities"]
        assert (ada["entityType"], ada["observations"]) == ("Person", ["Math: yes", "Poet: no"])
        added = await ok(client, "add_metadata", {"nodeName": "Ada", "metadata": ["Poet: no", "Engine: analytical"]})
        assert added["data"]["metadata"] == ["Engine: analytical"]


async def test_a_name_held_under_two_labels_is_refused_with_its_labels(world: Client) -> None:
    """The gate profile lets two labels hold one name (MemoryMesh does not): which node an edge means is the
    agent's to say, with write_relationship or a typed tool."""
    await ok(world, "add_nodes", {"nodes": [RIVENDELL]})
    prov = {"source": "atlas", "extraction_method": "manual"}
    await ok(world, "write_node", {"label": "Person", "merge_keys": {"name": "Elrond"}, **prov})
    await ok(world, "write_node", {"label": "Organization", "merge_keys": {"name": "Elrond"}, **prov})
    edge = {"from": "Elrond", "to": "Rivendell", "edgeType": "located_in"}
    refused = await rejected(world, "add_edges", {"edges": [edge]})
    assert refused["error_code"] == "INVALID_INPUT"
    assert refused["details"]["labels"] == ["Organization", "Person"]


async def test_arguments_sent_as_json_text_are_read_as_json(world: Client, graph: GraphBackend) -> None:
    """A command-line client that does not know a tool's schema (MCP Inspector's, for a tool its session does not
    list) sends every value as text; some models double-encode arrays. Where the schema takes no text, the text
    is read as the JSON it holds; where it takes text, it stays text."""
    out = await ok(world, "add_nodes", {"nodes": json.dumps([RIVENDELL])})
    assert out["data"]["nodes"][0]["name"] == "Rivendell"
    keys = {"label": "Person", "merge_keys": '{"name": "Ada"}', "source": "atlas", "extraction_method": "manual"}
    assert (await ok(world, "write_node", keys))["merge_keys"] == {"name": "Ada"}
    found = await ok(world, "search_nodes", {"query": '["Ada"]'})  # a query is text: searched as written
    assert found["entities"] == []
    refused = await rejected(world, "add_nodes", {"nodes": "[{broken"})
    assert refused["error_code"] == "INVALID_INPUT" and await nodes(graph, "broken") == 0


async def at_once(clients: tuple[Client, Client], tool: str, args: dict[str, Any]) -> list[str]:
    """Both clients make the same call at the same moment: each answer's error code ("ok" for a success), sorted."""
    answers: list[Any] = []

    async def call(client: Client) -> None:
        answers.append(await client.call_tool(tool, args))

    async with anyio.create_task_group() as both:
        for client in clients:
            both.start_soon(call, client)
    return sorted((a.structured_content or {}).get("error_code", "ok") for a in answers)


async def test_two_agents_adding_one_name_at_once_make_one_node_and_one_refusal(
    settings: Settings, graph: GraphBackend, world: Client
) -> None:
    """Both look the name up before either writes it, often: the second write finds it then, and its call is refused
    as a look-up would have refused it. Never two nodes, never two successes."""
    async with open_client(settings.model_copy(update={"toolsets": "mesh"}), "in_process") as other:
        for round_ in range(20):
            node = {"name": f"Twin {round_}", "nodeType": "location", "metadata": ["Type: Town"]}
            assert await at_once((world, other), "add_nodes", {"nodes": [node]}) == ["ALREADY_EXISTS", "ok"], round_
            assert await nodes(graph, node["name"]) == 1


async def test_two_agents_adding_one_edge_at_once_make_one_edge_and_one_refusal(
    settings: Settings, graph: GraphBackend, world: Client
) -> None:
    await ok(world, "add_nodes", {"nodes": [GANDALF, RIVENDELL]})
    edge = {"from": "Gandalf", "to": "Rivendell", "edgeType": "located_in", "weight": 0.5}
    async with open_client(settings.model_copy(update={"toolsets": "mesh"}), "in_process") as other:
        for round_ in range(20):
            assert await at_once((world, other), "add_edges", {"edges": [edge]}) == ["ALREADY_EXISTS", "ok"], round_
            rows = await graph.read(Statement("MATCH ()-[r:LOCATED_IN]->() RETURN r.weight AS w"))
            assert [row["w"] for row in rows] == [0.5]  # one edge, its weight not averaged by the second call
            await ok(world, "delete_edges", {"edges": [edge]})

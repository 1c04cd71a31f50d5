"""The mesh profile (`serve --profile mesh`): an agent written for MemoryMesh (seed 000) talks to the gate as it talked
to MemoryMesh, through a real MCP session on every engine tier, with MemoryMesh's own schema files loaded: its
eleven tools and the typed tools listed, every answer `{data, actionTaken, timestamp}` (the reads' nodes and edges,
the typed tools' created node and edges), every refusal `{error, context, suggestions}` beside the gate's code."""

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.conftest import MATRIX_SCHEMAS, MEMORYMESH_SCHEMAS, MESH_DEFAULT_TOOLS, ok, open_client, rejected
from tests.e2e import readme_blocks as rb
from write_gate.core.clock import utc_now
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.bundled import bundled
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

TYPED = {f"{verb}_{kind}" for verb in ("add", "update", "delete") for kind in ("npc", "location", "artifact")}
GANDALF = {"name": "Gandalf", "role": "Wizard", "status": "Active", "currentLocation": "Rivendell"}


@pytest.fixture
async def mesh(settings: Settings, graph: GraphBackend) -> AsyncIterator[Client]:
    await load_into_graph(graph, read_sources([MEMORYMESH_SCHEMAS, MATRIX_SCHEMAS]))
    async with open_client(settings, "in_process", "mesh") as client:
        yield client


def mesh_refusal(answer: dict[str, Any], code: str) -> list[str]:
    """MemoryMesh's fields beside the gate's: the message as `error`, the details as `context`; the suggestions."""
    assert answer["error_code"] == code, answer
    assert answer["error"] == answer["message"] and answer["context"] == answer["details"]
    assert isinstance(answer["suggestions"], list) and all(isinstance(s, str) for s in answer["suggestions"])
    return answer["suggestions"]


async def test_the_profile_lists_memorymesh_s_eleven_and_the_typed_tools(
    settings: Settings, graph: GraphBackend
) -> None:
    await load_into_graph(graph, read_sources([MEMORYMESH_SCHEMAS]))
    async with open_client(settings, "stdio", "mesh") as client:  # `write-gate serve --profile mesh`
        schemas = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
        listed = set(schemas)
        assert listed >= MESH_DEFAULT_TOOLS | TYPED
        # update_npc as MemoryMesh lists it (seed 000, 5.2): add_npc's fields, only the name required.
        add, update = (schemas[f"{verb}_npc"]["properties"]["npc"] for verb in ("add", "update"))
        assert update["properties"] == add["properties"] and update["required"] == ["name"] != add["required"]
        # Each field's description as its schema file writes it (5.2), a relationship's too (an audit found more).
        described = json.loads((MEMORYMESH_SCHEMAS / "npc.schema.json").read_text())["properties"]
        assert {k: v.get("description") for k, v in add["properties"].items()} == {
            k: v["description"] for k, v in described.items()
        }
        assert not listed & {"write_node", "create_entities", "get_schema"}  # the other profiles' own, not listed
        found = await ok(client, "search_nodes", {"query": "anything"})
        assert found["data"] == {"nodes": [], "edges": []}


async def test_typed_tools_answer_the_node_and_edges_they_wrote(mesh: Client) -> None:
    place = await ok(mesh, "add_location", {"location": {"name": "Rivendell", "type": "Town"}})
    assert place["actionTaken"] == "Created location: Rivendell" and place["timestamp"].endswith("Z")
    assert set(place) == {"data", "actionTaken", "timestamp"}  # MemoryMesh's three, and no conflict met
    added = await ok(mesh, "add_npc", {"npc": {**GANDALF, "traits": ["wise", "patient"]}})
    assert added["actionTaken"] == "Created npc: Gandalf"
    [node] = added["data"]["nodes"]
    assert (node["name"], node["nodeType"]) == ("Gandalf", "npc")  # seed 000 14.2, in MemoryMesh's spelling
    # Its fields as MemoryMesh keeps them, "Key: Value", an array joined with ", ", a relationship's target too.
    fields = ["Role: Wizard", "Status: Active", "Current Location: Rivendell", "Traits: wise, patient"]
    assert node["metadata"] == fields  # in the schema file's order, the relationship's among them (seed 000, 3.7)
    assert added["data"]["edges"] == [{"from": "Gandalf", "to": "Rivendell", "edgeType": "located_in", "weight": 1.0}]
    moved = await ok(mesh, "update_npc", {"npc": {"name": "Gandalf", "status": "Missing"}})
    assert moved["actionTaken"] == "Updated npc: Gandalf"
    assert "Status: Missing" in moved["data"]["nodes"][0]["metadata"]  # the node as the graph now holds it
    gone = await ok(mesh, "delete_npc", {"npc": {"name": "Gandalf"}})
    assert (gone["data"], gone["actionTaken"]) == ({"nodeNames": ["Gandalf"]}, "Deleted npc: Gandalf")


async def open_one(mesh: Client, name: str) -> dict[str, Any]:
    [node] = [n for n in (await ok(mesh, "open_nodes", {"names": [name]}))["data"]["nodes"] if n["name"] == name]
    return node


async def test_a_typed_update_replaces_the_entries_the_static_tools_wrote(mesh: Client) -> None:
    """Seed 000, 3.4 and 14.2: update_npc to Mordor replaces "Current Location: Rivendell", set up with add_nodes and
    add_edges as with add_npc; an add_metadata naming a field sets it, so the entry shows what the node holds."""
    for place in ("Rivendell", "Mordor"):
        await ok(mesh, "add_location", {"location": {"name": place, "type": "Town"}})
    written = ["Role: Wizard", "Status: Active", "Current Location: Rivendell"]
    await ok(mesh, "add_nodes", {"nodes": [{"name": "Gandalf", "nodeType": "npc", "metadata": written}]})
    await ok(mesh, "add_edges", {"edges": [{"from": "Gandalf", "to": "Rivendell", "edgeType": "located_in"}]})
    moved = await ok(
        mesh, "update_npc", {"npc": {"name": "Gandalf", "currentLocation": "Mordor", "status": "Deceased"}}
    )
    now = ["Role: Wizard", "Status: Deceased", "Current Location: Mordor"]
    assert moved["data"]["nodes"][0]["metadata"] == now
    assert moved["data"]["edges"] == [{"from": "Gandalf", "to": "Mordor", "edgeType": "located_in", "weight": 1.0}]
    [gandalf] = [
        n for n in (await ok(mesh, "open_nodes", {"names": ["Gandalf"]}))["data"]["nodes"] if n["name"] == "Gandalf"
    ]
    assert gandalf["metadata"] == now
    await ok(mesh, "add_metadata", {"nodeName": "Gandalf", "metadata": ["Status: Missing"]})
    found = await ok(mesh, "search_nodes", {"query": "missing"})
    [gandalf] = [n for n in found["data"]["nodes"] if n["name"] == "Gandalf"]
    assert "Status: Missing" in gandalf["metadata"] and "Status: Deceased" not in gandalf["metadata"]
    # The field shows once, though the entries as written now name it twice (a black-box audit saw it twice).
    assert [e for e in gandalf["metadata"] if e.startswith("Status")] == ["Status: Missing"]
    # A field's entry as written goes with the field: deleting what the answer shows leaves no stale value behind.
    await ok(mesh, "add_metadata", {"nodeName": "Gandalf", "metadata": ["Traits: wise, grey"]})
    await ok(mesh, "update_npc", {"npc": {"name": "Gandalf", "traits": ["old"]}})
    shown = await open_one(mesh, "Gandalf")
    assert "Traits: old" in shown["metadata"]
    # The graph keeps "Traits: wise, grey" as written, but the answer shows the value held: "grey" is no match.
    assert (await ok(mesh, "search_nodes", {"query": "grey"}))["data"]["nodes"] == []
    await ok(mesh, "delete_metadata", {"nodeName": "Gandalf", "metadata": ["Traits: old"]})
    assert not [e for e in (await open_one(mesh, "Gandalf"))["metadata"] if e.startswith("Traits")]
    refused = await rejected(mesh, "add_metadata", {"nodeName": "Gandalf", "metadata": ["Status: Asleep"]})
    assert refused["error_code"] == "SCHEMA_TYPE_MISMATCH"  # an npc's status is one of the schema's, as in add_nodes
    [gandalf] = [
        n for n in (await ok(mesh, "open_nodes", {"names": ["Gandalf"]}))["data"]["nodes"] if n["name"] == "Gandalf"
    ]
    assert "Status: Asleep" not in gandalf["metadata"]  # nothing appended either


async def test_add_nodes_reads_a_number_field_so_a_required_one_can_be_given(
    settings: Settings, graph: GraphBackend
) -> None:
    """The shipped rpg player_character requires an integer level: "Level: 3" is it, as add_player_character writes."""
    await load_into_graph(graph, read_sources([bundled("schemas") / "examples" / "rpg"]))
    async with open_client(settings, "in_process", "mesh") as mesh:
        hero = {"name": "Hero", "nodeType": "player_character", "metadata": ["Class: Rogue", "Level: 3"]}
        added = await ok(mesh, "add_nodes", {"nodes": [hero]})
        assert added["data"]["nodes"][0]["metadata"] == ["Class: Rogue", "Level: 3"]
        await ok(mesh, "update_player_character", {"player_character": {"name": "Hero", "level": 4}})
        [shown] = (await ok(mesh, "open_nodes", {"names": ["Hero"]}))["data"]["nodes"]
        assert shown["metadata"] == ["Class: Rogue", "Level: 4"]
        odd = {**hero, "name": "Odd", "metadata": ["Class: Rogue", "Level: three"]}
        refused = await rejected(mesh, "add_nodes", {"nodes": [odd]})
        assert refused["error_code"] == "SCHEMA_TYPE_MISMATCH", refused  # not "requires level"


async def test_a_typed_add_refuses_an_empty_name_as_add_nodes_does(mesh: Client) -> None:
    """Seed 000, 11.1: a node's name is a non-empty string, whichever tool writes it."""
    typed = await rejected(mesh, "add_npc", {"npc": {"name": "", "role": "Peasant", "status": "Active"}})
    static = await rejected(mesh, "add_nodes", {"nodes": [{"name": "", "nodeType": "npc", "metadata": []}]})
    assert typed["error_code"] == static["error_code"] == "INVALID_INPUT", (typed, static)
    assert (await ok(mesh, "read_graph", {}))["data"]["nodes"] == []


async def test_the_reads_answer_nodes_and_edges_with_neighbours(mesh: Client) -> None:
    await ok(mesh, "add_location", {"location": {"name": "Rivendell", "type": "Town"}})
    await ok(mesh, "add_npc", {"npc": GANDALF})
    await ok(
        mesh,
        "add_nodes",
        {"nodes": [{"name": "Frodo", "nodeType": "npc", "metadata": ["Role: Bearer", "Status: Active"]}]},
    )
    await ok(
        mesh, "add_edges", {"edges": [{"from": "Frodo", "to": "Rivendell", "edgeType": "located_in", "weight": 0.8}]}
    )
    edge = {"from": "Frodo", "to": "Rivendell", "edgeType": "located_in", "weight": 0.8}
    whole = await ok(mesh, "read_graph", {})
    assert {n["name"] for n in whole["data"]["nodes"]} == {"Rivendell", "Gandalf", "Frodo"}
    assert edge in whole["data"]["edges"] and whole["next_cursor"] is None
    assert whole["actionTaken"] == "Read graph"
    frodo = next(n for n in whole["data"]["nodes"] if n["name"] == "Frodo")
    frodo_fields = ["Role: Bearer", "Status: Active", "Current Location: Rivendell"]  # its edge, a declared field
    assert frodo == {"name": "Frodo", "nodeType": "npc", "metadata": frodo_fields}
    found = await ok(mesh, "search_nodes", {"query": "BEARER"})  # case-insensitive, in the metadata
    assert [n["name"] for n in found["data"]["nodes"]] == ["Frodo", "Rivendell"]  # the match, then its neighbour
    assert found["data"]["edges"] == [edge]
    opened = await ok(mesh, "open_nodes", {"names": ["Gandalf"]})
    assert [n["name"] for n in opened["data"]["nodes"]][0] == "Gandalf"
    assert [n["name"] for n in opened["data"]["nodes"]] == ["Gandalf", "Rivendell"]
    assert opened["data"]["edges"] == [{"from": "Gandalf", "to": "Rivendell", "edgeType": "located_in", "weight": 1.0}]


async def test_a_relationship_field_query_answers_what_passes_its_tags_and_importance(
    settings: Settings, mesh: Client
) -> None:
    """Seed 004's filters on seed 000's search: "Current Location: Rivendell" with `tags` finds the tagged npc
    beside Rivendell, whatever tags Rivendell (the node holding the text) has; the filter was applied to it."""
    await ok(mesh, "add_location", {"location": {"name": "Rivendell", "type": "Town"}})
    await ok(mesh, "add_npc", {"npc": GANDALF})
    await ok(mesh, "add_npc", {"npc": {**GANDALF, "name": "Elrond"}})
    async with open_client(settings.model_copy(update={"toolsets": "knowledge"}), "in_process", "mesh") as tagger:
        await ok(tagger, "add_tags", {"entityName": "Gandalf", "tags": ["vip"]})
        await ok(tagger, "set_importance", {"entityName": "Gandalf", "importance": 9})

    async def found(**args: Any) -> list[str]:
        query = {"query": "Current Location: Rivendell", **args}
        return sorted(n["name"] for n in (await ok(mesh, "search_nodes", query))["data"]["nodes"])

    assert await found(neighbors=False) == ["Elrond", "Gandalf"]
    assert await found(neighbors=False, tags=["VIP"]) == await found(neighbors=False, minImportance=5) == ["Gandalf"]
    assert await found(tags=["vip"]) == ["Gandalf"]  # Rivendell, his neighbour, has no tag: left out
    assert await found(neighbors=False, maxImportance=5) == []


async def test_search_finds_a_typed_node_by_the_key_value_entries_its_answer_shows(mesh: Client) -> None:
    """Seed 000, 4.5: a query is matched against each metadata entry. add_npc stores `role` as a field, shown as
    "Role: Wizard"; add_nodes keeps "Role: Bearer" as written. Both are found by their entries, whole or in part,
    across the separator, and a page holds the candidates that show the query."""
    await ok(mesh, "add_location", {"location": {"name": "Rivendell", "type": "Town"}})
    await ok(mesh, "add_npc", {"npc": GANDALF})
    await ok(mesh, "add_npc", {"npc": {"name": "Saruman", "role": "Wizard", "status": "Missing"}})
    frodo = {"name": "Frodo", "nodeType": "npc", "metadata": ["Role: Bearer", "Status: Inactive"]}
    tower = {"name": "Wizard Tower", "nodeType": "location", "metadata": ["Type: Building"]}
    await ok(mesh, "add_nodes", {"nodes": [frodo, tower]})

    async def found(query: str, **args: Any) -> list[str]:
        answer = await ok(mesh, "search_nodes", {"query": query, "neighbors": False, **args})
        assert answer["actionTaken"] == f"Searched nodes: {query}"
        return sorted(n["name"] for n in answer["data"]["nodes"])

    assert await found("Role: Wizard") == ["Gandalf", "Saruman"]  # not the tower: "wizard" alone is no entry
    assert await found("role: wiz") == await found("ROLE: WIZARD") == ["Gandalf", "Saruman"]
    assert await found("le: wiz") == ["Gandalf", "Saruman"]  # across the separator
    assert await found("Status: Active") == ["Gandalf"] and await found("Status: Missing") == ["Saruman"]
    assert await found("Role: Bearer") == ["Frodo"]  # kept as written
    # A relationship field's entry, from the node's edge: Gandalf shows "Current Location: Rivendell".
    assert await found("Current Location: Rivendell") == await found("location: riv") == ["Gandalf"]
    # A filtered search answers what passes its filter, the node found beside a candidate too.
    assert await found("Current Location: Rivendell", labels=["Npc"]) == ["Gandalf"]
    assert await found("Current Location: Rivendell", labels=["Location"]) == []
    assert await found("Current Location: Rivendell", provenance={"source": "elsewhere"}) == []
    assert await found("status", labels=["Location"]) == [] and await found("Role: Wizard", tags=["none"]) == []
    # Claims since a moment only Rivendell's new type holds: Rivendell passes as a candidate, not Gandalf beside it.
    await anyio.sleep(0.01)
    since = utc_now()
    await anyio.sleep(0.01)
    await ok(mesh, "update_location", {"location": {"name": "Rivendell", "type": "City"}})
    assert await found("Current Location: Rivendell", provenance={"since": since}) == []
    assert await found("Current Location: Rivendell", provenance={"since": "2000-01-01T00:00:00Z"}) == ["Gandalf"]
    assert await found("Role: Sorcerer") == [] and await found("Status: Wizard") == []
    assert await found("wizard") == ["Gandalf", "Saruman", "Wizard Tower"]  # a plain query reads as before
    # Within an entry's key: every node that shows such an entry, whatever its value (paged as one list).
    assert await found("status") == await found("US: ") == ["Frodo", "Gandalf", "Saruman"]
    assert await found("location") == ["Gandalf", "Rivendell", "Wizard Tower"]  # his edge's entry; their type
    walked, cursor = [], None
    while True:
        page = await ok(mesh, "search_nodes", {"query": "status", "neighbors": False, "limit": 1, "cursor": cursor})
        walked += [n["name"] for n in page["data"]["nodes"]]
        if (cursor := page["next_cursor"]) is None:
            break
    assert sorted(walked) == ["Frodo", "Gandalf", "Saruman"] and len(walked) == 3
    with_neighbours = await ok(mesh, "search_nodes", {"query": "Status: Active"})
    assert [n["name"] for n in with_neighbours["data"]["nodes"]] == ["Gandalf", "Rivendell"]
    first = await ok(mesh, "search_nodes", {"query": "Role: Wizard", "neighbors": False, "limit": 1})
    rest = await ok(mesh, "search_nodes", {"query": "Role: Wizard", "neighbors": False, "cursor": first["next_cursor"]})
    paged = [n["name"] for n in first["data"]["nodes"] + rest["data"]["nodes"]]
    assert sorted(paged) == ["Gandalf", "Saruman"] and rest["next_cursor"] is None


MAGIC_ITEM = {
    "name": "add_magic_item",
    "description": "An item with magic in it",
    "properties": {"name": {"type": "string", "description": "The item's name", "required": True}},
}


async def test_search_finds_a_typed_node_by_the_node_type_its_answer_shows(
    settings: Settings, graph: GraphBackend, tmp_path: Path
) -> None:
    """Seed 000, 4.5: the query is a substring of a node's nodeType. add_magic_item's node shows `magic_item`, and
    the graph holds its label, MagicItem: a query within the type as shown ("magic_item", "c_i") found it only
    where add_nodes had kept the spelling. A query its answer does not show ("magicitem") finds neither."""
    (tmp_path / "magic_item.schema.json").write_text(json.dumps(MAGIC_ITEM))
    await load_into_graph(graph, read_sources([tmp_path, MATRIX_SCHEMAS]))
    async with open_client(settings, "in_process", "mesh") as mesh:
        added = await ok(mesh, "add_magic_item", {"magic_item": {"name": "Palantir"}})
        assert added["data"]["nodes"][0]["nodeType"] == "magic_item"
        await ok(mesh, "add_nodes", {"nodes": [{"name": "Ring", "nodeType": "magic_item", "metadata": []}]})
        await ok(mesh, "add_nodes", {"nodes": [{"name": "Staff", "nodeType": "Magic Item", "metadata": []}]})

        async def found(query: str) -> list[str]:
            answer = await ok(mesh, "search_nodes", {"query": query, "neighbors": False})
            return sorted(n["name"] for n in answer["data"]["nodes"])

        assert await found("magic_item") == await found("C_I") == ["Palantir", "Ring"]
        assert await found("magic item") == ["Staff"] and await found("magicitem") == []
        assert await found("item") == ["Palantir", "Ring", "Staff"]


async def test_a_neighbour_shows_the_metadata_it_shows_when_read_itself(mesh: Client) -> None:
    """B's "Parent Location: C" comes from its own edge B -> C, which an answer about A (A -> B) does not hold:
    it is read for B, so B shows the same entries beside A, found or opened, as in read_graph and open_nodes ["B"]."""
    places = [{"name": name, "nodeType": "location", "metadata": ["Type: Town"]} for name in ("A", "B", "C")]
    await ok(mesh, "add_nodes", {"nodes": places})
    edges = [{"from": a, "to": b, "edgeType": "contained_in"} for a, b in (("A", "B"), ("B", "C"))]
    await ok(mesh, "add_edges", {"edges": edges})

    def b_in(answer: dict[str, Any]) -> list[str]:
        [b] = [n for n in answer["data"]["nodes"] if n["name"] == "B"]
        return b["metadata"]

    shown = ["Type: Town", "Parent Location: C"]
    assert b_in(await ok(mesh, "read_graph", {})) == b_in(await ok(mesh, "open_nodes", {"names": ["B"]})) == shown
    beside_a = await ok(mesh, "open_nodes", {"names": ["A"]})
    assert b_in(beside_a) == shown and beside_a["data"]["edges"] == [{**edges[0], "weight": 1.0}]  # no more edges
    assert b_in(await ok(mesh, "search_nodes", {"query": "Parent Location: B"})) == shown  # A's match, B beside it
    assert b_in(await ok(mesh, "search_nodes", {"query": "Type: Town"})) == shown


async def test_a_typed_update_with_an_empty_list_empties_the_field_s_entry(mesh: Client) -> None:
    """Seed 000, 5.3: update_npc parses the metadata into key -> value, sets the changed key and rebuilds it, so
    `traits: []` leaves "Traits: " (the empty join), not the old "Traits: brave, wise"."""
    written = ["Role: Wizard", "Status: Active", "Traits: brave, wise"]
    await ok(mesh, "add_nodes", {"nodes": [{"name": "H", "nodeType": "npc", "metadata": written}]})
    emptied = await ok(mesh, "update_npc", {"npc": {"name": "H", "traits": []}})
    now = ["Role: Wizard", "Status: Active", "Traits: "]
    assert emptied["data"]["nodes"][0]["metadata"] == now
    assert (await open_one(mesh, "H"))["metadata"] == now
    assert (await ok(mesh, "search_nodes", {"query": "brave"}))["data"]["nodes"] == []
    await ok(mesh, "delete_metadata", {"nodeName": "H", "metadata": ["Traits: "]})  # what the answer shows
    assert (await open_one(mesh, "H"))["metadata"] == ["Role: Wizard", "Status: Active"]
    await ok(mesh, "update_npc", {"npc": {"name": "H", "traits": ["kind"]}})
    assert (await open_one(mesh, "H"))["metadata"] == ["Role: Wizard", "Status: Active", "Traits: kind"]


async def test_a_query_within_a_key_finds_only_nodes_whose_answer_shows_it(
    settings: Settings, graph: GraphBackend
) -> None:
    """Seed 000, 4.5, with the shipped rpg schemas: "m" lies within a location's "Atmosphere: ", which neither
    place shows, nor "m" in its name, type or entries; their stored provenance ("llm", the extraction method) is
    not in the answer, so it matches nothing. "p" is in Gandalf's type, "npc", and in no place's answer."""
    await load_into_graph(graph, read_sources([bundled("schemas") / "examples" / "rpg"]))
    async with open_client(settings, "in_process", "mesh") as mesh:
        nodes = [
            {"name": "Rivendell", "nodeType": "location", "metadata": []},
            {"name": "Bag End", "nodeType": "location", "metadata": ["Region: Shire"]},
            {"name": "Gandalf", "nodeType": "npc", "metadata": ["Role: Wizard", "Status: Active"]},
        ]
        await ok(mesh, "add_nodes", {"nodes": nodes})

        async def found(query: str) -> list[str]:
            answer = await ok(mesh, "search_nodes", {"query": query})
            return sorted(n["name"] for n in answer["data"]["nodes"])

        for query in ("m", "ph", "atmos", "desc", "llm", "npc: "):
            assert await found(query) == [], query
        assert await found("p") == ["Gandalf"]  # "npc"
        assert await found("region") == await found("on: sh") == ["Bag End"]  # the entry it shows
        assert await found("npc") == ["Gandalf"]  # its type, as the answer shows it


async def test_a_page_at_a_time_with_its_cursor_beside_the_data(mesh: Client) -> None:
    nodes = [{"name": f"Orc {i}", "nodeType": "npc", "metadata": ["Role: Grunt", "Status: Active"]} for i in range(5)]
    await ok(mesh, "add_nodes", {"nodes": nodes})
    first = await ok(mesh, "read_graph", {"limit": 3})
    assert len(first["data"]["nodes"]) == 3 and first["next_cursor"]
    rest = await ok(mesh, "read_graph", {"limit": 3, "cursor": first["next_cursor"]})
    names = [n["name"] for n in first["data"]["nodes"] + rest["data"]["nodes"]]
    assert sorted(names) == sorted(n["name"] for n in nodes) and rest["next_cursor"] is None


async def test_refusals_carry_memorymesh_s_error_context_and_suggestions(mesh: Client) -> None:
    missing = await rejected(mesh, "add_npc", {"npc": {"name": "Bilbo", "role": "Burglar"}})
    assert mesh_refusal(missing, "SCHEMA_MISSING_REQUIRED_PROPERTY") == ["Provide status"]
    assert missing == json.loads(rb.block("answer:add_npc#mesh-refusal").text)  # the docs page's example, as answered
    wrong = await rejected(mesh, "add_npc", {"npc": {"name": "Bilbo", "role": "Burglar", "status": "Asleep"}})
    [allowed] = mesh_refusal(wrong, "SCHEMA_TYPE_MISMATCH")
    assert "Active" in allowed and "Missing" in allowed
    node = {"name": "Bilbo", "nodeType": "npc", "metadata": ["Role: Burglar", "Status: Active"]}
    await ok(mesh, "add_nodes", {"nodes": [node]})
    twice = await rejected(mesh, "add_nodes", {"nodes": [node]})
    assert "update_nodes" in mesh_refusal(twice, "ALREADY_EXISTS")[0]
    drifted = {"from": "Bilbo", "to": "Bilbo", "edgeType": "directed"}
    [types] = mesh_refusal(await rejected(mesh, "add_edges", {"edges": [drifted]}), "SCHEMA_UNKNOWN_LABEL")
    assert "KNOWS" in types
    assert mesh_refusal(await rejected(mesh, "add_nodes", {"nodes": "Bilbo"}), "INVALID_INPUT")
    absent = await rejected(mesh, "add_metadata", {"nodeName": "Smaug", "metadata": ["Role: Dragon"]})
    assert mesh_refusal(absent, "ENTITY_NOT_FOUND")


async def test_a_typed_add_refuses_a_name_any_node_holds_and_changes_nothing(mesh: Client) -> None:
    """MemoryMesh's add tools create, never update (validateNodeDoesNotExist; names are unique across types): a
    second add_npc of Gandalf, or an add_npc named as a location, is refused and leaves the node as it was."""
    await ok(mesh, "add_location", {"location": {"name": "Rivendell", "type": "Town"}})
    await ok(mesh, "add_npc", {"npc": {"name": "Gandalf", "role": "Wizard", "status": "Active"}})
    again = await rejected(mesh, "add_npc", {"npc": {"name": "Gandalf", "role": "Warrior", "status": "Deceased"}})
    assert mesh_refusal(again, "ALREADY_EXISTS") == ["Update it instead (update_npc), or choose another name"]
    assert again["error"] == "Node 'Gandalf' already exists"  # seed 000, 7.2
    taken = await rejected(mesh, "add_npc", {"npc": {"name": "Rivendell", "role": "Elf", "status": "Active"}})
    mesh_refusal(taken, "ALREADY_EXISTS")
    found = await ok(mesh, "open_nodes", {"names": ["Gandalf", "Rivendell"]})
    assert sorted((n["name"], n["nodeType"]) for n in found["data"]["nodes"]) == [
        ("Gandalf", "npc"),
        ("Rivendell", "location"),
    ]
    [gandalf] = [n for n in found["data"]["nodes"] if n["name"] == "Gandalf"]
    assert gandalf["metadata"] == ["Role: Wizard", "Status: Active"]


async def test_update_nodes_replaces_the_metadata_and_delete_metadata_removes_what_it_names(mesh: Client) -> None:
    """MemoryMesh's update_nodes replaces the whole metadata array (a declared field it no longer names goes, but a
    required one, which the schema keeps); delete_metadata removes the entries named, a declared field's
    property with it (a required one is refused); each answers what the graph then holds."""
    await ok(mesh, "add_location", {"location": {"name": "Bree", "type": "Town", "notableFeatures": ["inn", "gate"]}})
    updated = await ok(mesh, "update_nodes", {"nodes": [{"name": "Bree", "metadata": ["Atmosphere: rainy"]}]})
    [node] = updated["data"]["nodes"]
    assert node["metadata"] == ["Atmosphere: rainy", "Type: Town"]
    assert (await ok(mesh, "open_nodes", {"names": ["Bree"]}))["data"]["nodes"] == [node]  # the answer is the graph's
    features = await ok(
        mesh, "update_nodes", {"nodes": [{"name": "Bree", "metadata": ["Notable Features: inn, well"]}]}
    )
    assert features["data"]["nodes"][0]["metadata"] == ["Notable Features: inn, well", "Type: Town"]
    deleted = await ok(
        mesh, "delete_metadata", {"nodeName": "Bree", "metadata": ["Notable Features: inn, well", "Mood: grim"]}
    )
    assert deleted["data"] == {"nodeName": "Bree", "metadata": ["Notable Features: inn, well"]}  # what was there
    assert (await ok(mesh, "open_nodes", {"names": ["Bree"]}))["data"]["nodes"][0]["metadata"] == ["Type: Town"]
    await ok(mesh, "add_location", {"location": {"name": "Archet", "type": "Village", "notableFeatures": ["wood"]}})
    plain = await ok(mesh, "delete_metadata", {"nodeName": "Archet", "metadata": ["Notable Features: wood"]})
    assert plain["data"]["metadata"] == ["Notable Features: wood"]  # a typed field: the property, no entry
    assert (await ok(mesh, "open_nodes", {"names": ["Archet"]}))["data"]["nodes"][0]["metadata"] == ["Type: Village"]
    required = await rejected(mesh, "delete_metadata", {"nodeName": "Archet", "metadata": ["Type: Village"]})
    mesh_refusal(required, "SCHEMA_MISSING_REQUIRED_PROPERTY")
    assert (await ok(mesh, "open_nodes", {"names": ["Archet"]}))["data"]["nodes"][0]["metadata"] == ["Type: Village"]


async def test_the_metadata_answers_say_what_the_node_shows(mesh: Client) -> None:
    """Seed 000, 4.4: add_metadata appends an entry the node lacks and passes over one it has (exact match): an entry
    it showed already moved to the front and was answered as added. delete_metadata answers the entries it removed:
    one the node did not show (kept as written by update_nodes, behind its edge's entry), or one it still shows (a
    relationship field's, from its edge), was answered as removed."""
    for place in ("Rivendell", "Mordor"):
        await ok(mesh, "add_location", {"location": {"name": place, "type": "Town"}})
    await ok(mesh, "add_npc", {"npc": GANDALF})

    async def shown() -> list[str]:
        return (await ok(mesh, "open_nodes", {"names": ["Gandalf"]}))["data"]["nodes"][0]["metadata"]

    before = await shown()
    assert before == ["Role: Wizard", "Status: Active", "Current Location: Rivendell"]
    again = await ok(mesh, "add_metadata", {"nodeName": "Gandalf", "metadata": ["Status: Active", "Role: Wizard"]})
    assert again["data"] == {"nodeName": "Gandalf", "metadata": []} and await shown() == before
    added = await ok(mesh, "add_metadata", {"nodeName": "Gandalf", "metadata": ["Smokes", "Smokes", "Role: Wizard"]})
    assert added["data"]["metadata"] == ["Smokes"] and await shown() == ["Smokes", *before]  # written, then fields
    await ok(
        mesh, "update_nodes", {"nodes": [{"name": "Gandalf", "metadata": [*before[:2], "Current Location: Mordor"]}]}
    )
    held = await shown()
    assert "Current Location: Rivendell" in held and "Current Location: Mordor" not in held  # the edge's entry
    for entries in (["Current Location: Mordor"], ["Current Location: Rivendell"]):
        gone = await ok(mesh, "delete_metadata", {"nodeName": "Gandalf", "metadata": entries})
        assert gone["data"]["metadata"] == [] and await shown() == held, entries
    await ok(mesh, "add_metadata", {"nodeName": "Gandalf", "metadata": ["Smokes"]})
    gone = await ok(mesh, "delete_metadata", {"nodeName": "Gandalf", "metadata": ["Smokes", "Smokes", "Nope"]})
    assert gone["data"]["metadata"] == ["Smokes"] and await shown() == held


async def test_a_node_of_an_unregistered_type_answers_the_type_it_was_given(mesh: Client) -> None:
    """MemoryMesh keeps any nodeType as given; the gate files an unregistered one under the fallback label and keeps
    the type as written, which every mesh answer shows (not `entity`)."""
    added = await ok(
        mesh, "add_nodes", {"nodes": [{"name": "Smaug", "nodeType": "dragon", "metadata": ["Hoard: gold"]}]}
    )
    assert added["data"]["nodes"] == [{"name": "Smaug", "nodeType": "dragon", "metadata": ["Hoard: gold"]}]
    opened = await ok(mesh, "open_nodes", {"names": ["Smaug"]})
    assert [(n["name"], n["nodeType"]) for n in opened["data"]["nodes"]] == [("Smaug", "dragon")]
    found = await ok(mesh, "search_nodes", {"query": "hoard"})
    assert [n["nodeType"] for n in found["data"]["nodes"]] == ["dragon"]


async def test_every_node_type_is_answered_as_it_was_given(mesh: Client) -> None:
    """Seed 000, 2.1: nodeType as given, capitals included, registered or not; a typed tool's node has its schema
    file's name (add_npc writes `npc`)."""
    given = [("Ada", "Person"), ("Bilbo", "NPC"), ("Ring", "MagicItem"), ("Sam", "npc")]
    nodes = [{"name": name, "nodeType": kind, "metadata": ["Role: Gardener", "Status: Active"]} for name, kind in given]
    added = await ok(mesh, "add_nodes", {"nodes": nodes})
    assert [(n["name"], n["nodeType"]) for n in added["data"]["nodes"]] == given
    await ok(mesh, "add_npc", {"npc": {"name": "Frodo", "role": "Bearer", "status": "Active"}})
    whole = await ok(mesh, "read_graph", {})
    assert {n["name"]: n["nodeType"] for n in whole["data"]["nodes"]} == {**dict(given), "Frodo": "npc"}


async def at_once(name: str, *clients: Client) -> list[Any]:
    """Each client's add_npc of `name`, sent together (each waits for one signal), as each answered."""
    answers: list[Any] = []
    ready = anyio.Event()

    async def add(client: Client, role: str) -> None:
        await ready.wait()
        answers.append(await client.call_tool("add_npc", {"npc": {"name": name, "role": role, "status": "Active"}}))

    async with anyio.create_task_group() as tasks:
        for i, client in enumerate(clients):
            tasks.start_soon(add, client, f"Role {i}")
        await anyio.sleep(0.1)
        ready.set()
    return answers


async def test_two_adds_of_one_node_at_once_create_it_once_and_refuse_the_other(
    settings: Settings, graph: GraphBackend
) -> None:
    """Two gate processes (stdio), each an agent adding the same wizard at the same moment, four wizards in turn:
    the check that refuses a name that exists is made on the node as read for the guarded write, so of each pair
    one creates and one is refused, whichever is first (a look-up before the write alone let both through)."""
    await load_into_graph(graph, read_sources([MEMORYMESH_SCHEMAS]))
    async with open_client(settings, "stdio", "mesh") as one, open_client(settings, "stdio", "mesh") as two:
        for name in ("Gandalf", "Saruman", "Radagast", "Alatar"):
            answers = await at_once(name, one, two)
            assert sorted(bool(a.is_error) for a in answers) == [False, True], name
            [refused] = [a.structured_content for a in answers if a.is_error]
            [created] = [a.structured_content for a in answers if not a.is_error]
            assert refused["error_code"] == "ALREADY_EXISTS"
            statement = Statement("MATCH (n:Npc {name: $name}) RETURN n.role AS role, count(*) AS n", {"name": name})
            [row] = await graph.read(statement)
            assert row == {"role": created["data"]["nodes"][0]["metadata"][0].removeprefix("Role: "), "n": 1}


async def test_the_gate_profile_keeps_its_answers_and_its_mesh_tools_refuse_as_memorymesh(settings: Settings) -> None:
    async with open_client(settings.model_copy(update={"toolsets": "mesh"}), "in_process") as gate:
        refused = await rejected(gate, "add_nodes", {"nodes": [{"name": "X", "nodeType": "npc", "metadata": []}]})
        mesh_refusal(refused, refused["error_code"])
        plain = await rejected(gate, "write_node", {"label": "Person", "merge_keys": {}, "source": "t"})
        assert "error" not in plain and "suggestions" not in plain  # the gate's own tools answer as they did
        assert "entities" in await ok(gate, "read_graph", {})


async def test_a_claim_met_is_in_the_answer_beside_the_node_as_the_graph_holds_it(
    settings: Settings, mesh: Client
) -> None:
    await ok(mesh, "add_npc", {"npc": {"name": "Elrond", "role": "Lord", "status": "Active"}})
    async with open_client(settings, "in_process") as gate:  # another writer's claim: an API's
        fact = {"label": "Npc", "merge_keys": {"name": "Elrond"}, "properties": {"role": "Lord", "status": "Active"}}
        await ok(gate, "write_node", {**fact, "source": "registry-api", "extraction_method": "api"})
    guess = await ok(mesh, "update_npc", {"npc": {"name": "Elrond", "status": "Missing"}})
    assert "Status: Missing" in guess["data"]["nodes"][0]["metadata"]  # the default policy: the last writer's
    [met] = guess["conflicts"]
    assert (met["property"], met["outcome"], met["current_value"]) == ("status", "overwritten", "Active")


async def test_many_edges_are_checked_together_and_each_answered_as_it_stands(mesh: Client) -> None:
    """One read per type and pair of labels finds which of a call's edges exist: each is judged as its own."""
    places = [{"name": f"Hall {i}", "nodeType": "location", "metadata": ["Type: Building"]} for i in range(3)]
    npc = {"name": "Thorin", "nodeType": "npc", "metadata": ["Role: King", "Status: Active"]}
    await ok(mesh, "add_nodes", {"nodes": [*places, npc]})
    first = {"from": "Thorin", "to": "Hall 1", "edgeType": "located_in", "weight": 0.4}
    second = {**first, "to": "Hall 0", "weight": 0.2}
    await ok(mesh, "add_edges", {"edges": [first]})
    lives = {"from": "Thorin", "to": "Hall 2", "edgeType": "lives_in"}
    refused = await rejected(mesh, "add_edges", {"edges": [second, lives, first]})
    assert refused["error_code"] == "ALREADY_EXISTS" and "Hall 1" in refused["message"]
    await ok(mesh, "add_edges", {"edges": [second, lives]})
    moved = await ok(mesh, "update_edges", {"edges": [{**first, "weight": 0.8}, {**second, "weight": 0.8}]})
    assert [e["weight"] for e in moved["data"]["edges"]] == [0.6, 0.5]  # (0.4 + 0.8) / 2, (0.2 + 0.8) / 2
    gone = {**lives, "to": "Hall 0"}
    missing = await rejected(mesh, "update_edges", {"edges": [{**first, "weight": 0.5}, {**gone, "weight": 0.5}]})
    assert missing["error_code"] == "RELATION_NOT_FOUND" and "Hall 0" in missing["message"]

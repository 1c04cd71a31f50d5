"""Typed tools generated from the registry (seed 000's model), through a real MCP client session:
schema loading, add/update/delete with relationship properties, enums, atomicity, weights, refresh."""

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.conftest import CLIENT_NAME, GATE_TOOLS, MATRIX_SCHEMAS, TESTS, hint, ok, open_client, rejected
from write_gate.access.agents import AgentsFile, Grant
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.bundled import bundled
from write_gate.store.schema_files import SchemaFileError, load_into_graph, read_sources
from write_gate.surface.server import build_server

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

RPG = bundled("schemas") / "examples" / "rpg"
PROV = {"source": "dm-notes", "extraction_method": "manual", "reliability": 0.8}


@pytest.fixture
async def rpg(settings: Settings, graph: GraphBackend) -> AsyncIterator[Client]:
    """The rpg registry's typed tools, listed (their toolset: they are not in the default list)."""
    await load_into_graph(graph, read_sources([RPG, MATRIX_SCHEMAS]))
    async with open_client(typed_listed(settings), "in_process") as client:
        yield client


async def located(graph: GraphBackend, name: str) -> list[str]:
    rows = await graph.read(
        Statement("MATCH (:Npc {name: $name})-[:LOCATED_IN]->(l) RETURN l.name AS l ORDER BY l", {"name": name})
    )
    return [r["l"] for r in rows]


def typed_listed(settings: Settings) -> Settings:
    return settings.model_copy(update={"toolsets": "typed"})


GANDALF = {"npc": {"name": "Gandalf", "role": "Wizard", "status": "Active"}, **PROV}


# 14.1 schema loading


def test_the_rpg_examples_load_as_eleven_types_and_their_relationship_types() -> None:
    entries = {e.name: e for e in read_sources([RPG])}
    nodes = [e for e in entries.values() if e.kind == "node"]
    assert len(nodes) == 11 and all(e.typed_tools for e in nodes)
    assert entries["Npc"].required_properties == ["name", "role", "status"]
    assert entries["LOCATED_IN"].from_labels == ["Npc", "PlayerCharacter"]
    assert entries["LOCATED_IN"].to_labels == ["Location"]


def _with_home(home: dict[str, Any]) -> dict[str, Any]:
    """A seed-format npc file with one more property, `home`, defined as given."""
    properties = {"name": {"type": "string", "description": "n"}, "home": {"description": "h", **home}}
    return {"name": "add_npc", "description": "x", "properties": properties}


@pytest.mark.parametrize(
    "content,reason",
    [
        ({"name": "npc", "description": "x", "properties": {"name": {"type": "string", "description": "n"}}}, "add_"),
        ({"name": "add_npc", "properties": {"name": {"type": "string", "description": "n"}}}, "description"),
        ({"name": "add_npc", "description": "x", "properties": {"name": {"description": "n"}}}, '"type"'),
        (
            {"name": "add_npc", "description": "x", "properties": {"name": {"type": "date", "description": "n"}}},
            "type must be one of",
        ),
        (_with_home({"type": "string", "relationship": {"nodeType": "location"}}), "edgeType"),
        (_with_home({"type": "string", "relationship": "lives_in"}), "must be an object"),
        (_with_home({"type": "integer", "relationship": {"edgeType": "lives_in"}}), "string or array of string"),
        (
            _with_home({"type": "array", "items": {"type": "integer"}, "relationship": {"edgeType": "lives_in"}}),
            "string or array of string",
        ),
    ],
)
def test_malformed_seed_schemas_are_refused_with_file_and_reason(tmp_path: Path, content: dict, reason: str) -> None:
    (tmp_path / "npc.schema.json").write_text(json.dumps(content))
    with pytest.raises(SchemaFileError) as caught:
        read_sources([tmp_path])
    assert caught.value.path.name == "npc.schema.json" and reason in caught.value.reason


async def test_three_schema_files_give_nine_tools(settings: Settings, graph: GraphBackend) -> None:
    await load_into_graph(
        graph, read_sources([RPG / "npc.schema.json", RPG / "location.schema.json", RPG / "currency.schema.json"])
    )
    async with open_client(typed_listed(settings), "in_process") as client:
        names = {t.name for t in (await client.list_tools()).tools}
    typed = {n for n in names - GATE_TOOLS if n.split("_", 1)[0] in ("add", "update", "delete")}
    assert typed == {f"{verb}_{t}" for verb in ("add", "update", "delete") for t in ("npc", "location", "currency")}


async def test_generated_input_schemas_let_a_client_validate_first(rpg: Client) -> None:
    tools = {t.name: t for t in (await rpg.list_tools()).tools}
    add = tools["add_npc"].input_schema
    npc = add["properties"]["npc"]
    assert npc["required"] == ["name", "role", "status"] and add["required"] == ["npc"]
    assert npc["properties"]["role"]["enum"] == ["Warrior", "Wizard", "Merchant", "Noble", "Peasant", "Thief"]
    assert npc["properties"]["traits"] == {
        "type": "array",
        "items": {"type": "string"},
        "description": "Character traits",
    }
    jsonschema.validate(GANDALF, add)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**GANDALF, "npc": {**GANDALF["npc"], "role": "Dragon"}}, add)
    assert tools["update_npc"].input_schema["properties"]["npc"]["required"] == ["name"]
    assert set(tools["delete_npc"].input_schema["properties"]["npc"]["properties"]) == {"name"}
    assert hint(tools["delete_npc"].annotations, "destructive_hint") is True
    assert tools["add_player_character"].input_schema["properties"]["player_character"]["properties"]["level"] == {
        "type": "integer",
        "description": "Experience level",
    }


async def test_a_memorymesh_call_without_a_claim_is_written_with_the_clients_defaults(
    rpg: Client, graph: GraphBackend
) -> None:
    """Seed 000's own calls (14.2) carry no source or extraction method: an agent moved from MemoryMesh is not
    refused for them. The write is stamped as the memory profile's are: the client's name as its source, `llm`,
    the default reliability; a call that declares its claim keeps it."""
    await ok(rpg, "add_location", {"location": {"name": "Rivendell", "region": "Eriador"}})
    call = {"npc": {"name": "Gandalf", "role": "Wizard", "status": "Active", "currentLocation": "Rivendell"}}
    written = await ok(rpg, "add_npc", call)
    assert written["status"] == "written" and [r["to"] for r in written["relationships"]] == ["Rivendell"]
    assert await located(graph, "Gandalf") == ["Rivendell"]
    [node] = await graph.read(
        Statement("MATCH (n:Npc {name: 'Gandalf'}) RETURN n.source AS s, n.extraction_method AS m, n.confidence AS c")
    )
    assert node == {"s": CLIENT_NAME, "m": "llm", "c": written["confidence"]} and written["confidence"] < 0.6
    await ok(rpg, "update_npc", {"npc": {"name": "Gandalf", "status": "Missing"}, **PROV})
    [node] = await graph.read(Statement("MATCH (n:Npc {name: 'Gandalf'}) RETURN n.source AS s, n.status AS st"))
    assert node == {"s": "dm-notes", "st": "Missing"}


async def test_update_refers_to_add_for_its_fields_only_where_add_is_listed(
    settings: Settings, graph: GraphBackend, tmp_path: Path
) -> None:
    await load_into_graph(graph, read_sources([RPG / "npc.schema.json", RPG / "location.schema.json"]))
    agents = AgentsFile.load(tmp_path / "agents.toml")
    agents.add("updater", Grant(tools=("update_npc", "add_location")))
    agents.save()
    listings = {}
    for case, changes in {
        "both": {"toolsets": "typed"},
        "selection": {"tools": "typed:Npc,-add_npc"},  # named outright: listed without the typed toolset
        "grant": {"agents_file": tmp_path / "agents.toml", "agent": "updater"},
    }.items():
        async with Client(build_server(settings.model_copy(update=changes), auto_migrate=False)) as client:
            listings[case] = {t.name: t.input_schema for t in (await client.list_tools()).tools}
    brief = listings["both"]["update_npc"]["properties"]["npc"]
    assert set(brief["properties"]) == {"name"} and brief["required"] == ["name"]
    assert "add_npc's npc fields" in brief["description"]
    whole = listings["both"]["add_npc"]["properties"]["npc"]["properties"]
    for case in ("selection", "grant"):  # add_npc hidden: update_npc says every field itself
        assert (
            "add_npc" not in listings[case] and listings[case]["update_npc"]["properties"]["npc"]["properties"] == whole
        )
    assert set(listings["grant"]) == {"update_npc", "add_location"}  # named by the grant: listed


# 14.2 dynamic tools


async def test_add_creates_a_gated_stamped_node(rpg: Client, graph: GraphBackend) -> None:
    out = await ok(rpg, "add_npc", {**GANDALF, "npc": {**GANDALF["npc"], "traits": ["wise", "grumpy"]}})
    assert out["status"] == "written" and out["label"] == "Npc" and out["confidence"] == pytest.approx(0.6)
    [row] = await graph.read(Statement("MATCH (n:Npc {name: 'Gandalf'}) RETURN n"))
    node = row["n"]
    assert (node["role"], node["status"], node["traits"]) == ("Wizard", "Active", ["wise", "grumpy"])
    assert node["source"] == "dm-notes" and node["extraction_method"] == "manual"


async def test_relationship_property_on_add_update_and_delete(rpg: Client, graph: GraphBackend) -> None:
    for place in ("Rivendell", "Mordor"):
        await ok(rpg, "add_location", {"location": {"name": place}, **PROV})
    out = await ok(rpg, "add_npc", {**GANDALF, "npc": {**GANDALF["npc"], "currentLocation": "Rivendell"}})
    assert out["relationships"] == [
        {"type": "LOCATED_IN", "to_label": "Location", "to": "Rivendell", "stub": False, "weight": 1.0}
    ]
    assert await located(graph, "Gandalf") == ["Rivendell"]

    await ok(rpg, "update_npc", {"npc": {"name": "Gandalf", "currentLocation": "Mordor"}, **PROV})
    assert await located(graph, "Gandalf") == ["Mordor"]  # the old one is replaced, not added to
    [row] = await graph.read(Statement("MATCH (n:Npc {name: 'Gandalf'}) RETURN n"))
    assert row["n"]["role"] == "Wizard"  # a partial update leaves the other fields alone
    [rel] = await graph.read(Statement("MATCH (:Npc)-[r:LOCATED_IN]->() RETURN r"))
    assert rel["r"]["weight"] == 1.0 and rel["r"]["source"] == "dm-notes"

    assert (await ok(rpg, "delete_npc", {"npc": {"name": "Gandalf"}}))["status"] == "deleted"
    assert await graph.read(Statement("MATCH (n:Npc) RETURN n")) == []
    assert await graph.read(Statement("MATCH ()-[r:LOCATED_IN]->() RETURN r")) == []
    assert len(await graph.read(Statement("MATCH (n:Location) RETURN n"))) == 2
    assert (await rejected(rpg, "delete_npc", {"npc": {"name": "Gandalf"}}))["error_code"] == "ENTITY_NOT_FOUND"


async def test_enum_and_type_violations_are_schema_type_mismatch(rpg: Client, graph: GraphBackend) -> None:
    out = await rejected(rpg, "add_npc", {**GANDALF, "npc": {**GANDALF["npc"], "role": "Dragon"}})
    assert out["error_code"] == "SCHEMA_TYPE_MISMATCH" and "Wizard" in out["details"]["allowed"]
    out = await rejected(
        rpg, "add_player_character", {"player_character": {"name": "Pip", "class": "Rogue", "level": "three"}, **PROV}
    )
    assert out["error_code"] == "SCHEMA_TYPE_MISMATCH" and out["details"]["expected"] == "integer"
    # The same definitions hold on every write path, write_node included.
    out = await rejected(
        rpg,
        "write_node",
        {"label": "Npc", "merge_keys": {"name": "X"}, "properties": {"role": "Dragon", "status": "Active"}, **PROV},
    )
    assert out["error_code"] == "SCHEMA_TYPE_MISMATCH"
    assert await graph.read(Statement("MATCH (n:Npc) RETURN n")) == []


async def test_add_requires_the_required_fields_and_update_only_the_name(rpg: Client) -> None:
    out = await rejected(rpg, "add_npc", {"npc": {"name": "Nobody"}, **PROV})
    assert out["error_code"] == "SCHEMA_MISSING_REQUIRED_PROPERTY" and out["details"]["missing"] == ["role", "status"]
    out = await rejected(rpg, "update_npc", {"npc": {"name": "Nobody", "status": "Missing"}, **PROV})
    assert out["error_code"] == "ENTITY_NOT_FOUND"
    out = await rejected(rpg, "update_npc", {"npc": {"status": "Missing"}, **PROV})
    assert out["error_code"] == "SCHEMA_MISSING_REQUIRED_PROPERTY"
    out = await rejected(rpg, "add_npc", {**GANDALF, "npc": {**GANDALF["npc"], "wand": "elder"}})
    assert out["error_code"] == "SCHEMA_UNKNOWN_PROPERTY" and out["details"]["properties"] == ["wand"]


async def test_a_failed_part_leaves_nothing_behind(rpg: Client, graph: GraphBackend) -> None:
    out = await rejected(rpg, "add_npc", {**GANDALF, "npc": {**GANDALF["npc"], "currentLocation": "Nowhere"}})
    assert out["error_code"] == "ENDPOINT_NOT_FOUND" and out["details"]["missing"] == ["Location name='Nowhere'"]
    assert await graph.read(Statement("MATCH (n:Npc) RETURN n")) == []  # the node was not written either
    await ok(rpg, "add_npc", GANDALF)
    out = await rejected(
        rpg, "update_npc", {"npc": {"name": "Gandalf", "status": "Deceased", "currentLocation": "Nowhere"}, **PROV}
    )
    assert out["error_code"] == "ENDPOINT_NOT_FOUND"
    [row] = await graph.read(Statement("MATCH (n:Npc {name: 'Gandalf'}) RETURN n.status AS status"))
    assert row["status"] == "Active"


async def test_merge_endpoints_creates_the_target_as_a_stub(rpg: Client, graph: GraphBackend) -> None:
    out = await ok(
        rpg,
        "add_npc",
        {**GANDALF, "npc": {**GANDALF["npc"], "currentLocation": "Shire"}, "endpoint_policy": "merge_endpoints"},
    )
    assert out["relationships"][0]["stub"] is True
    [row] = await graph.read(Statement("MATCH (l:Location {name: 'Shire'}) RETURN l._stub AS stub"))
    assert row["stub"] is True


async def test_update_with_merge_endpoints_and_a_relationship_property(rpg: Client, graph: GraphBackend) -> None:
    """The statement shape both engines once refused (MERGE of the target, then MATCH of the node): an update
    that creates its target as a stub, on every engine tier; and on a missing node it leaves no stub behind."""
    await ok(rpg, "add_npc", GANDALF)
    args = {"npc": {"name": "Gandalf", "currentLocation": "Isengard"}, "endpoint_policy": "merge_endpoints", **PROV}
    out = await ok(rpg, "update_npc", args)
    assert out["relationships"] == [
        {"type": "LOCATED_IN", "to_label": "Location", "to": "Isengard", "stub": True, "weight": 1.0}
    ]
    assert await located(graph, "Gandalf") == ["Isengard"]
    missing = {**args, "npc": {"name": "Saruman", "currentLocation": "Orthanc"}}
    assert (await rejected(rpg, "update_npc", missing))["error_code"] == "ENTITY_NOT_FOUND"
    assert await graph.read(Statement("MATCH (l:Location {name: 'Orthanc'}) RETURN l")) == []


# 14.3 neighbour-inclusive reads on typed nodes


async def test_search_and_open_include_the_relations_and_neighbours_of_matches(rpg: Client) -> None:
    await ok(rpg, "add_location", {"location": {"name": "Rivendell", "atmosphere": "Peaceful"}, **PROV})
    await ok(rpg, "add_location", {"location": {"name": "Bree"}, **PROV})
    await ok(rpg, "add_npc", {**GANDALF, "npc": {**GANDALF["npc"], "currentLocation": "Rivendell"}})
    found = await ok(rpg, "search_nodes", {"query": "wizard"})
    assert [e["name"] for e in found["entities"]] == ["Gandalf", "Rivendell"]
    assert [(r["from"], r["relationType"], r["to"]) for r in found["relations"]] == [
        ("Gandalf", "LOCATED_IN", "Rivendell")
    ]
    opened = await ok(rpg, "open_nodes", {"names": ["Rivendell"]})
    assert [e["name"] for e in opened["entities"]] == ["Rivendell", "Gandalf"]
    assert [(r["from"], r["to"]) for r in opened["relations"]] == [("Gandalf", "Rivendell")]


# 14.5 weights


REL = {
    "type": "KNOWS",
    "from_label": "Person",
    "from_keys": {"name": "A"},
    "to_label": "Person",
    "to_keys": {"name": "B"},
    "endpoint_policy": "merge_endpoints",
    **PROV,
}


async def test_weights_default_average_and_range(rpg: Client, graph: GraphBackend) -> None:
    assert (await ok(rpg, "write_relationship", REL))["weight"] == 1.0
    assert (await ok(rpg, "write_relationship", {**REL, "weight": 0.6}))["weight"] == pytest.approx(0.8)
    assert (await ok(rpg, "write_relationship", {**REL, "weight": 0.6}))["weight"] == pytest.approx(0.7)
    assert (await ok(rpg, "write_relationship", REL))["weight"] == pytest.approx(0.7)  # no weight: unchanged
    [row] = await graph.read(Statement("MATCH ()-[r:KNOWS]->() RETURN r.weight AS w"))
    assert row["w"] == pytest.approx(0.7)
    for bad in (1.5, -0.1):
        assert (await rejected(rpg, "write_relationship", {**REL, "weight": bad}))["error_code"] == "INVALID_INPUT"
    out = await rejected(rpg, "write_relationship", {**REL, "properties": {"weight": 0.1}})
    assert out["error_code"] == "SCHEMA_PROTECTED_FIELD"
    [row] = await graph.read(Statement("MATCH ()-[r:KNOWS]->() RETURN r.weight AS w"))
    assert row["w"] == pytest.approx(0.7)


# refresh regenerates


async def test_refresh_adds_and_removes_tools_and_says_so(settings: Settings, graph: GraphBackend, tmp_path) -> None:
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS]))
    changes: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changes.append(message.method)

    # No registry poll in the test's time: it would notice the loads below first, and announce them itself.
    quiet = typed_listed(settings).model_copy(update={"registry_poll_seconds": 3600})
    server = build_server(quiet, auto_migrate=False)
    async with Client(server, mode="legacy", message_handler=on_message) as client:

        async def typed() -> set[str]:
            return {t.name for t in (await client.list_tools()).tools if t.name.endswith("_npc")}

        assert await typed() == set()
        await load_into_graph(graph, read_sources([RPG / "npc.schema.json", RPG / "location.schema.json"]))
        await ok(client, "refresh_schema_cache", {})
        assert await typed() == {"add_npc", "update_npc", "delete_npc"}
        await ok(client, "add_npc", GANDALF)

        retired = tmp_path / "npc.json"
        entry = {"name": "Npc", "allowed": False, "merge_keys": ["name"]}
        retired.write_text(json.dumps(entry))
        await load_into_graph(graph, read_sources([retired]))
        await ok(client, "refresh_schema_cache", {})
        assert await typed() == set()
        with pytest.raises(MCPError) as gone:  # an unknown tool is a protocol error (-32602), per the MCP spec
            await client.call_tool("add_npc", GANDALF)
        assert gone.value.code == types.INVALID_PARAMS
        await ok(client, "refresh_schema_cache", {})  # nothing changed: no notification
    assert changes == ["notifications/tools/list_changed"] * 2


async def test_a_registry_change_made_elsewhere_is_announced_to_connected_sessions(
    settings: Settings, graph: GraphBackend
) -> None:
    """Another gate or the CLI loads schemas: this gate notices at its next poll and tells every connected
    session to list its tools again, not only the session whose request is running."""
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS]))
    heard = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            heard.set()

    polling = typed_listed(settings).model_copy(update={"registry_poll_seconds": 0.2})
    async with Client(build_server(polling, auto_migrate=False), mode="legacy", message_handler=on_message) as client:
        assert not {t.name for t in (await client.list_tools()).tools if t.name.endswith("_npc")}
        await load_into_graph(graph, read_sources([RPG / "npc.schema.json", RPG / "location.schema.json"]))
        with anyio.fail_after(30):
            await heard.wait()
        assert {"add_npc", "update_npc", "delete_npc"} <= {t.name for t in (await client.list_tools()).tools}


UNIT = {
    "name": "add_unit",
    "description": "A unit of an organisation, under one parent unit",
    "properties": {
        "name": {"type": "string", "description": "The unit's name", "required": True},
        "parent": {
            "type": "string",
            "description": "The unit it is part of",
            "required": False,
            "relationship": {"edgeType": "child_of", "nodeType": "unit", "description": "The unit it is part of"},
        },
        "parents": {
            "type": "array",
            "description": "Units it is part of",
            "items": {"type": "string", "description": "A unit's name"},
            "required": False,
            "relationship": {"edgeType": "child_of", "nodeType": "unit", "description": "Units it is part of"},
        },
    },
}


async def test_a_typed_tool_keeps_the_hierarchy_one_parent_and_no_cycle(
    settings: Settings, graph: GraphBackend, tmp_path: Path
) -> None:
    """A relationship property of the hierarchy's type (CHILD_OF) replaces the node's parent, as set_entity_parent
    does: it names one parent (two: CONFLICT, one_parent) and never the node itself or one of its descendants
    (HIERARCHY_CYCLE, naming the argument), whether the node is added or updated; nothing is written then. The typed
    tools wrote both (root under its own grandchild made a cycle)."""
    (tmp_path / "unit.schema.json").write_text(json.dumps(UNIT))
    await load_into_graph(graph, read_sources([tmp_path, TESTS / "schemas" / "child_of"]))

    async def parents() -> set[tuple[str, str]]:
        rows = await graph.read(Statement("MATCH (c:Unit)-[:CHILD_OF]->(p) RETURN c.name AS c, p.name AS p"))
        return {(row["c"], row["p"]) for row in rows}

    async with open_client(typed_listed(settings), "in_process") as client:
        await ok(client, "add_unit", {"unit": {"name": "root"}, **PROV})
        await ok(client, "add_unit", {"unit": {"name": "a", "parent": "root"}, **PROV})
        await ok(client, "add_unit", {"unit": {"name": "a1", "parent": "a"}, **PROV})
        tree = {("a", "root"), ("a1", "a")}
        for tool, unit in (
            ("update_unit", {"name": "root", "parent": "a1"}),  # under its grandchild
            ("update_unit", {"name": "a", "parents": ["a"]}),  # under itself
            ("add_unit", {"name": "b", "parent": "b"}),
        ):
            refused = await rejected(client, tool, {"unit": unit, **PROV})
            assert (refused["error_code"], refused["details"]["field"]) == ("HIERARCHY_CYCLE", [*unit][1]), unit
        for unit in ({"name": "c", "parents": ["root", "a"]}, {"name": "a1", "parent": "root", "parents": ["a1x"]}):
            tool = "add_unit" if unit["name"] == "c" else "update_unit"
            refused = await rejected(client, tool, {"unit": unit, "endpoint_policy": "merge_endpoints", **PROV})
            assert (refused["error_code"], refused["details"]["reason"]) == ("CONFLICT", "one_parent"), unit
        assert await parents() == tree  # nothing written
        assert {r["name"] for r in await graph.read(Statement("MATCH (n:Unit) RETURN n.name AS name"))} == {
            "root",
            "a",
            "a1",
        }
        await ok(client, "update_unit", {"unit": {"name": "a1", "parent": "root"}, **PROV})  # moved: one parent
        assert await parents() == {("a", "root"), ("a1", "root")}
        refused = await rejected(client, "update_unit", {"unit": {"name": "root", "parents": ["a1"]}, **PROV})
        assert refused["error_code"] == "HIERARCHY_CYCLE"

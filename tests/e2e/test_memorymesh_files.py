"""Schema files in the shapes MemoryMesh ships (tests/schemas/memorymesh): relationship blocks without
`nodeType`, array relationship properties, `additionalProperties: true`, enums and required fields. They load
unchanged, and their typed tools are driven through a real MCP client session on every engine tier: targets
found by name across labels, relationship sets replaced by updates, undeclared properties checked and
written, weights on the relationships typed tools write, and `combined_weight` on the relations reads answer."""

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import Client

from tests.conftest import MATRIX_SCHEMAS, TESTS, hint, ok, open_client, rejected
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.migrations import migrate
from write_gate.store.schema_files import SchemaFileError, load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

MEMORYMESH = TESTS / "schemas" / "memorymesh"


def typed_listed(settings: Settings) -> Settings:
    return settings.model_copy(update={"toolsets": "typed"})


PROV = {"source": "campaign-log", "extraction_method": "manual", "reliability": 0.8}
MERGE = {"endpoint_policy": "merge_endpoints"}


@pytest.fixture
async def mesh(settings: Settings, graph: GraphBackend) -> AsyncIterator[Client]:
    """MemoryMesh's files alone: no fallback label; their typed tools listed (the `typed` toolset)."""
    await load_into_graph(graph, read_sources([MEMORYMESH]))
    async with open_client(typed_listed(settings), "in_process") as client:
        yield client


@pytest.fixture
async def world(settings: Settings, graph: GraphBackend) -> AsyncIterator[Client]:
    """MemoryMesh's files beside a registry with Person, Organization and the fallback Entity."""
    await load_into_graph(graph, read_sources([MEMORYMESH, MATRIX_SCHEMAS]))
    async with open_client(typed_listed(settings), "in_process") as client:
        yield client


async def npc(client: Client, name: str, **fields: Any) -> dict[str, Any]:
    extra = {k: fields.pop(k) for k in ("weight", "endpoint_policy") if k in fields}
    body = {"name": name, "role": "Ranger", "status": "Active", **fields}
    return await ok(client, "add_npc", {"npc": body, **PROV, **extra})


async def place(client: Client, name: str, **fields: Any) -> dict[str, Any]:
    return await ok(client, "add_location", {"location": {"name": name, "type": "Town", **fields}, **PROV})


async def faction(client: Client, name: str, **fields: Any) -> dict[str, Any]:
    return await ok(client, "add_faction", {"faction": {"name": name, "alignment": "Good", **fields}, **PROV})


async def edges(graph: GraphBackend, name: str, type_: str) -> list[tuple[str, str, float]]:
    """(target name, target label, weight) of a node's relationships of one type, by target name."""
    rows = await graph.read(
        Statement(
            f"MATCH (a {{name: $name}})-[r:`{type_}`]->(b) RETURN b.name AS b, labels(b) AS labels, r.weight AS w",
            {"name": name},
        )
    )
    return sorted((r["b"], r["labels"][0], r["w"]) for r in rows)


async def count(graph: GraphBackend, cypher: str, **params: Any) -> int:
    [row] = await graph.read(Statement(cypher, params))
    return row["c"]


# --- loading ---------------------------------------------------------------------------------------


def test_memorymesh_shaped_files_load_unchanged() -> None:
    entries = {e.name: e for e in read_sources([MEMORYMESH])}
    nodes = {name for name, e in entries.items() if e.kind == "node"}
    assert nodes == {"Npc", "Location", "Faction", "Artifact", "Transportation", "Skills"}
    assert entries["Npc"].additional_properties and not entries["Artifact"].additional_properties
    assert entries["Faction"].required_properties == ["name", "alignment"]
    assert entries["Location"].property_types["type"]["enum"] == [
        "City",
        "Town",
        "Village",
        "Fortress",
        "Wilderness",
        "Building",
    ]
    # Without nodeType the relationship type takes any target label; with it, that label.
    assert (entries["LOCATED_IN"].from_labels, entries["LOCATED_IN"].to_labels) == (["Npc"], [])
    assert entries["Npc"].property_types["currentLocation"]["relationship"] == {
        "type": "LOCATED_IN",
        "description": "The place the NPC is in",
    }
    assert (entries["ALLIED_WITH"].from_labels, entries["ALLIED_WITH"].to_labels) == (["Faction"], ["Faction"])
    # An array property with a relationship block: one relationship per item.
    assert entries["Faction"].property_types["members"] == {
        "type": "array",
        "items": "string",
        "description": "Who belongs to it",
        "relationship": {"type": "HAS_MEMBER", "description": "A member of the faction"},
    }
    # OWNED_BY: to Npc from artifact.schema.json, to any label from transportation.schema.json: any wins.
    assert (entries["OWNED_BY"].from_labels, entries["OWNED_BY"].to_labels) == (["Artifact", "Transportation"], [])


def test_additional_properties_is_for_entries_with_definitions(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text(json.dumps({"name": "Person", "additional_properties": True}))
    with pytest.raises(SchemaFileError) as caught:
        read_sources([tmp_path])
    assert "property definitions" in caught.value.reason


async def test_the_registry_on_the_graph_keeps_what_the_files_say(graph: GraphBackend, mesh: Client) -> None:
    rows = await graph.read(
        Statement(
            "MATCH (s:Schema) WHERE s.name IN ['Npc', 'Artifact'] "
            "RETURN s.name AS name, s.additional_properties AS open ORDER BY name"
        )
    )
    assert [(r["name"], r["open"]) for r in rows] == [("Artifact", False), ("Npc", True)]
    schema = await ok(mesh, "get_schema", {})
    [faction_view] = [v for v in schema["node_labels"] if v["name"] == "Faction"]
    assert faction_view["property_types"]["members"]["relationship"] == {
        "type": "HAS_MEMBER",
        "description": "A member of the faction",
    }


async def test_generated_tools_and_their_input_schemas(mesh: Client) -> None:
    tools = {t.name: t for t in (await mesh.list_tools()).tools}
    for type_ in ("npc", "location", "faction", "artifact", "transportation", "skills"):
        assert {f"add_{type_}", f"update_{type_}", f"delete_{type_}"} <= set(tools)
    add_npc, add_artifact = tools["add_npc"].input_schema, tools["add_artifact"].input_schema
    assert add_npc["properties"]["npc"]["additionalProperties"] is True
    assert add_artifact["properties"]["artifact"]["additionalProperties"] is False
    # update_ beside its add_: the merge keys, the rest as add_'s (and so open to any field).
    assert "additionalProperties" not in tools["update_npc"].input_schema["properties"]["npc"]
    assert tools["delete_npc"].input_schema["properties"]["npc"]["additionalProperties"] is False
    members = tools["add_faction"].input_schema["properties"]["faction"]["properties"]["members"]
    assert members["type"] == "array" and members["items"] == {"type": "string"} and members["maxItems"] == 100
    assert members["description"] == "Who belongs to it"  # the schema file's words, as written (seed 000, 5.2)
    assert add_npc["properties"]["weight"] == {
        "type": "number",
        "minimum": 0,
        "maximum": 1,
        "description": tools["add_faction"].input_schema["properties"]["weight"]["description"],
    }
    # The arguments about relationships, where a tool writes some.
    assert {"weight", "endpoint_policy"} <= set(tools["update_npc"].input_schema["properties"])
    assert not {"weight", "endpoint_policy"} & set(tools["add_skills"].input_schema["properties"])
    # A client validating first accepts an undeclared field where the file allows them, and only there.
    call = {"npc": {"name": "Aragorn", "role": "Ranger", "status": "Active", "age": 87}, **PROV, "weight": 0.5}
    jsonschema.validate(call, add_npc)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"artifact": {"name": "Ring", "rarity": "Rare", "color": "gold"}, **PROV}, add_artifact)
    # Tools that write relationships move their weights on a repeat: not idempotent.
    assert hint(tools["add_npc"].annotations, "idempotent_hint") is False
    assert hint(tools["add_skills"].annotations, "idempotent_hint") is True


async def test_a_type_the_files_only_imply_leaves_the_registered_one_alone(
    settings: Settings, graph: GraphBackend
) -> None:
    """On a migrated graph the memory registry defines LOCATED_IN outright (any endpoints, absorbing LIVES_IN,
    BASED_IN...): loading files that only imply it keeps that definition, so the memory profile's users keep
    their relation, and the typed tools write it too. The types only implied before are replaced as before."""
    await migrate(graph)
    loaded = await load_into_graph(graph, read_sources([MEMORYMESH]))
    assert loaded.kept == ["LOCATED_IN"] and loaded.written == len(read_sources([MEMORYMESH])) - 1
    [row] = await graph.read(Statement("MATCH (s:Schema {name: 'LOCATED_IN'}) RETURN s.absorbs AS absorbs"))
    assert "LIVES_IN" in row["absorbs"]
    again = await load_into_graph(graph, read_sources([MEMORYMESH]))
    assert again.kept == ["LOCATED_IN"]  # HAS_MEMBER and the others, implied both times, are written again
    async with open_client(settings, "in_process") as client:
        await place(client, "Bree")
        out = await npc(client, "Aragorn", currentLocation="Bree")
        assert out["relationships"][0]["type"] == "LOCATED_IN"
        await ok(client, "write_node", {"label": "Person", "merge_keys": {"name": "Ada"}, **PROV})
        rel = {"type": "LOCATED_IN", "from_label": "Person", "from_keys": {"name": "Ada"}, "to_label": "Location"}
        await ok(client, "write_relationship", {**rel, "to_keys": {"name": "Bree"}, **PROV})


# --- targets without nodeType ------------------------------------------------------------------------


async def test_a_target_without_node_type_is_found_by_name_in_any_label(mesh: Client, graph: GraphBackend) -> None:
    await place(mesh, "Bree")
    await faction(mesh, "Rangers")
    out = await npc(mesh, "Aragorn", currentLocation="Bree", home="Rangers")
    assert [(r["type"], r["to_label"], r["to"], r["stub"]) for r in out["relationships"]] == [
        ("LOCATED_IN", "Location", "Bree", False),
        ("LIVES_IN", "Faction", "Rangers", False),  # the answer says which label it found
    ]
    assert await edges(graph, "Aragorn", "LOCATED_IN") == [("Bree", "Location", 1.0)]
    assert await edges(graph, "Aragorn", "LIVES_IN") == [("Rangers", "Faction", 1.0)]
    # An update to a target in another label replaces the relationship.
    await ok(mesh, "update_npc", {"npc": {"name": "Aragorn", "currentLocation": "Rangers"}, **PROV})
    assert await edges(graph, "Aragorn", "LOCATED_IN") == [("Rangers", "Faction", 1.0)]


async def test_a_missing_target_without_node_type_is_not_found(mesh: Client, graph: GraphBackend) -> None:
    """Not found: ENDPOINT_NOT_FOUND, nothing written; with merge_endpoints, where the registry has no fallback
    label to create the stub under, a rejection saying so."""
    out = await rejected(mesh, "add_npc", {"npc": _aragorn(currentLocation="Nowhere"), **PROV})
    assert out["error_code"] == "ENDPOINT_NOT_FOUND" and out["details"]["missing"] == ["name='Nowhere'"]
    out = await rejected(mesh, "add_npc", {"npc": _aragorn(currentLocation="Nowhere"), **PROV, **MERGE})
    assert out["error_code"] == "SCHEMA_UNKNOWN_LABEL" and out["details"]["reason"] == "no_stub_label"
    assert out["details"]["fallback_label"] is None
    # An update of a node that is not there says so first, as with a target the schema names the label of.
    out = await rejected(mesh, "update_npc", {"npc": {"name": "Aragorn", "currentLocation": "Nowhere"}, **PROV})
    assert out["error_code"] == "ENTITY_NOT_FOUND"
    assert (
        await count(
            graph,
            "MATCH (n) WHERE NOT n:Schema AND NOT n:WriteGateRegistry AND NOT n:WriteGateQuarantine "
            "RETURN count(n) AS c",
        )
        == 0
    )


async def test_a_missing_target_without_node_type_is_a_stub_under_the_fallback_label(
    world: Client, graph: GraphBackend
) -> None:
    out = await ok(world, "add_npc", {"npc": _aragorn(currentLocation="Nowhere"), **PROV, **MERGE})
    assert out["relationships"] == [
        {"type": "LOCATED_IN", "to_label": "Entity", "to": "Nowhere", "stub": True, "weight": 1.0}
    ]
    [row] = await graph.read(Statement("MATCH (e:Entity {name: 'Nowhere'}) RETURN e._stub AS stub"))
    assert row["stub"] is True
    # The stub is found by name from then on: a second call links to it, not to a second stub.
    out = await ok(world, "add_npc", {"npc": _aragorn(name="Halbarad", currentLocation="Nowhere"), **PROV})
    assert out["relationships"][0]["to_label"] == "Entity" and out["relationships"][0]["stub"] is True
    assert await count(graph, "MATCH (e {name: 'Nowhere'}) RETURN count(e) AS c") == 1


def _aragorn(**fields: Any) -> dict[str, Any]:
    return {"name": "Aragorn", "role": "Ranger", "status": "Active", **fields}


async def test_a_name_under_several_labels_is_refused_naming_them(world: Client, graph: GraphBackend) -> None:
    await place(world, "Bree")
    await faction(world, "Bree")
    out = await rejected(world, "add_npc", {"npc": _aragorn(currentLocation="Bree"), **PROV})
    assert out["error_code"] == "INVALID_INPUT" and out["details"]["reason"] == "ambiguous_target"
    assert out["details"]["labels"] == ["Faction", "Location"] and "write_relationship" in out["message"]
    assert await count(graph, "MATCH (n:Npc) RETURN count(n) AS c") == 0
    # write_relationship names the label, so it can say which one.
    await npc(world, "Aragorn")
    rel = {"type": "LOCATED_IN", "from_label": "Npc", "from_keys": {"name": "Aragorn"}, "to_label": "Location"}
    await ok(world, "write_relationship", {**rel, "to_keys": {"name": "Bree"}, **PROV})
    assert await edges(graph, "Aragorn", "LOCATED_IN") == [("Bree", "Location", 1.0)]


async def test_a_registered_type_narrows_where_a_name_is_looked_for(
    settings: Settings, graph: GraphBackend, tmp_path: Path
) -> None:
    """A file that defines LOCATED_IN outright (to Location only) wins over the one the schema files imply:
    the same name then resolves to its Location, a Faction alone is not a place, and no stub can be made
    under the fallback label, which the type does not take."""
    (tmp_path / "located_in.json").write_text(
        json.dumps({"name": "LOCATED_IN", "kind": "relationship", "to_labels": ["Location"]})
    )
    await load_into_graph(graph, read_sources([MEMORYMESH, MATRIX_SCHEMAS, tmp_path]))
    async with open_client(settings, "in_process") as client:
        await place(client, "Bree")
        await faction(client, "Bree")
        await faction(client, "Isengard")
        out = await npc(client, "Aragorn", currentLocation="Bree")
        assert out["relationships"][0]["to_label"] == "Location"
        out = await rejected(client, "add_npc", {"npc": _aragorn(name="Saruman", currentLocation="Isengard"), **PROV})
        assert out["error_code"] == "SCHEMA_UNKNOWN_LABEL" and out["details"]["reason"] == "endpoint_label_not_allowed"
        out = await rejected(
            client, "add_npc", {"npc": _aragorn(name="Gollum", currentLocation="Moria"), **PROV, **MERGE}
        )
        assert out["error_code"] == "SCHEMA_UNKNOWN_LABEL" and out["details"]["reason"] == "no_stub_label"
    assert await count(graph, "MATCH (n:Npc) RETURN count(n) AS c") == 1


# --- array relationship properties ---------------------------------------------------------------


async def test_an_array_property_writes_one_relationship_per_item(mesh: Client, graph: GraphBackend) -> None:
    for name in ("Aragorn", "Legolas", "Gimli", "Boromir"):
        await npc(mesh, name)
    await faction(mesh, "Gondor")
    out = await faction(mesh, "Fellowship", members=["Aragorn", "Legolas", "Gimli", "Legolas"], allies=["Gondor"])
    assert [(r["type"], r["to"]) for r in out["relationships"]] == [
        ("HAS_MEMBER", "Aragorn"),
        ("HAS_MEMBER", "Legolas"),  # a repeated item is one relationship
        ("HAS_MEMBER", "Gimli"),
        ("ALLIED_WITH", "Gondor"),
    ]
    members = await edges(graph, "Fellowship", "HAS_MEMBER")
    assert [m[:2] for m in members] == [("Aragorn", "Npc"), ("Gimli", "Npc"), ("Legolas", "Npc")]

    # An update replaces the set of that type: Aragorn kept, Boromir added, the others removed, and the
    # relationships of other types left alone.
    [before] = await graph.read(
        Statement("MATCH (:Faction {name: 'Fellowship'})-[r:HAS_MEMBER]->({name: 'Aragorn'}) RETURN id(r) AS id")
    )
    update = {"faction": {"name": "Fellowship", "members": ["Aragorn", "Boromir"]}, **PROV}
    await ok(mesh, "update_faction", update)
    assert [m[0] for m in await edges(graph, "Fellowship", "HAS_MEMBER")] == ["Aragorn", "Boromir"]
    [after] = await graph.read(
        Statement("MATCH (:Faction {name: 'Fellowship'})-[r:HAS_MEMBER]->({name: 'Aragorn'}) RETURN id(r) AS id")
    )
    assert after == before  # merged, not deleted and made again
    assert await edges(graph, "Fellowship", "ALLIED_WITH") == [("Gondor", "Faction", 1.0)]

    # One missing item: nothing changes. An empty array clears the type.
    update["faction"]["members"] = ["Aragorn", "Sauron"]
    out = await rejected(mesh, "update_faction", update)
    assert out["error_code"] == "ENDPOINT_NOT_FOUND" and out["details"]["missing"] == ["name='Sauron'"]
    assert [m[0] for m in await edges(graph, "Fellowship", "HAS_MEMBER")] == ["Aragorn", "Boromir"]
    update["faction"]["members"] = []
    assert (await ok(mesh, "update_faction", update))["relationships"] == []
    assert await edges(graph, "Fellowship", "HAS_MEMBER") == []
    assert await edges(graph, "Fellowship", "ALLIED_WITH") == [("Gondor", "Faction", 1.0)]


async def test_array_items_resolve_each_in_its_own_label_and_stub_what_is_missing(
    world: Client, graph: GraphBackend
) -> None:
    await npc(world, "Elrond")
    await faction(world, "Elves")
    args = {"faction": {"name": "Council", "alignment": "Good", "members": ["Elrond", "Elves", "Glorfindel"]}, **PROV}
    out = await ok(world, "add_faction", {**args, **MERGE})
    assert [(r["to"], r["to_label"], r["stub"]) for r in out["relationships"]] == [
        ("Elrond", "Npc", False),
        ("Elves", "Faction", False),
        ("Glorfindel", "Entity", True),
    ]
    # allies names its nodeType: its items are that label's nodes, and missing ones are stubs of that label.
    out = await ok(
        world, "update_faction", {"faction": {"name": "Council", "allies": ["Elves", "Dwarves"]}, **PROV, **MERGE}
    )
    assert [(r["to"], r["to_label"], r["stub"]) for r in out["relationships"]] == [
        ("Elves", "Faction", False),
        ("Dwarves", "Faction", True),
    ]
    assert [m[0] for m in await edges(graph, "Council", "HAS_MEMBER")] == ["Elrond", "Elves", "Glorfindel"]


async def test_too_many_relationships_in_one_call_are_refused(mesh: Client, graph: GraphBackend) -> None:
    names = [f"Soldier {i}" for i in range(101)]
    out = await rejected(
        mesh, "add_faction", {"faction": {"name": "Army", "alignment": "Evil", "members": names}, **PROV, **MERGE}
    )
    assert out["error_code"] == "INVALID_INPUT" and out["details"] == {"limit": "max_relationships", "max": 100}
    assert await count(graph, "MATCH (n:Faction) RETURN count(n) AS c") == 0


# --- additionalProperties -----------------------------------------------------------------------------


async def test_undeclared_properties_are_written_where_the_file_allows_them(mesh: Client, graph: GraphBackend) -> None:
    await npc(mesh, "Aragorn", background="Ranger of the North", age=87, titles=["Elessar", "Strider"])
    [row] = await graph.read(Statement("MATCH (n:Npc {name: 'Aragorn'}) RETURN n"))
    node = row["n"]
    assert (node["background"], node["age"], node["titles"]) == ("Ranger of the North", 87, ["Elessar", "Strider"])
    await ok(mesh, "update_npc", {"npc": {"name": "Aragorn", "age": 88, "crowned": True}, **PROV})
    [row] = await graph.read(Statement("MATCH (n:Npc {name: 'Aragorn'}) RETURN n.age AS age, n.crowned AS c"))
    assert (row["age"], row["c"]) == (88, True)
    found = await ok(mesh, "search_nodes", {"query": "strider"})  # searchable like any written text
    assert [e["name"] for e in found["entities"]] == ["Aragorn"]
    # Where the file says false: refused, naming the field, and write_node stays the way to add more.
    out = await rejected(
        mesh, "add_artifact", {"artifact": {"name": "Anduril", "rarity": "Legendary", "color": "silver"}, **PROV}
    )
    assert out["error_code"] == "SCHEMA_UNKNOWN_PROPERTY" and out["details"]["properties"] == ["color"]


@pytest.mark.parametrize(
    "fields,code,reason",
    [
        ({"confidence": 1.0}, "SCHEMA_PROTECTED_FIELD", None),  # gate-computed
        ({"_key": "x"}, "SCHEMA_PROTECTED_FIELD", None),  # internal
        ({"Name": "Strider"}, "SCHEMA_PROTECTED_FIELD", "merge_key"),  # identity, under another spelling
        ({"Status": "Deceased", "status": "Active"}, "INVALID_INPUT", "same_property"),  # one property twice
        ({"stats": {"strength": 18}}, "INVALID_INPUT", None),  # a map: no engine stores one
        ({"bad key": 1}, "INVALID_INPUT", None),  # not an identifier
        ({"mixed": [1, "a"]}, "INVALID_INPUT", None),  # not a homogeneous list
    ],
)
async def test_undeclared_properties_pass_write_nodes_rules(
    mesh: Client, graph: GraphBackend, fields: dict[str, Any], code: str, reason: str | None
) -> None:
    for tool, args in (
        ("add_npc", {"npc": {**_aragorn(), **fields}, **PROV}),
        ("update_npc", {"npc": {"name": "Aragorn", **fields}, **PROV}),
    ):
        out = await rejected(mesh, tool, args)
        assert out["error_code"] == code, out
        assert reason is None or out["details"]["reason"] == reason
    assert await count(graph, "MATCH (n:Npc) RETURN count(n) AS c") == 0


async def test_a_respelled_defined_property_is_remapped_to_its_definition(mesh: Client, graph: GraphBackend) -> None:
    """`Status` is drift of the defined `status`: remapped to it (and checked against its enum), never written
    beside it as an undeclared property."""
    await npc(mesh, "Aragorn")
    out = await ok(mesh, "update_npc", {"npc": {"name": "Aragorn", "Status": "Deceased"}, **PROV})
    assert out["property_remaps"] == ["Status→status"]
    [row] = await graph.read(Statement("MATCH (n:Npc {name: 'Aragorn'}) RETURN n.status AS s, n.Status AS drift"))
    assert (row["s"], row["drift"]) == ("Deceased", None)
    out = await rejected(mesh, "update_npc", {"npc": {"name": "Aragorn", "STATUS": "Asleep"}, **PROV})
    assert out["error_code"] == "SCHEMA_TYPE_MISMATCH" and out["details"]["property"] == "status"


# --- weights --------------------------------------------------------------------------------------------


async def test_typed_tools_weigh_the_relationships_they_write(mesh: Client, graph: GraphBackend) -> None:
    for name in ("Bree", "Rivendell"):
        await place(mesh, name)
    out = await npc(mesh, "Aragorn", currentLocation="Bree", weight=0.4)
    assert out["relationships"][0]["weight"] == pytest.approx(0.4)
    update = {"npc": {"name": "Aragorn", "currentLocation": "Bree"}, **PROV}
    out = await ok(mesh, "update_npc", {**update, "weight": 0.8})  # the same relationship: averaged
    assert out["relationships"][0]["weight"] == pytest.approx(0.6)
    out = await ok(mesh, "update_npc", update)  # no weight: unchanged
    assert out["relationships"][0]["weight"] == pytest.approx(0.6)
    out = await ok(mesh, "update_npc", {**update, "npc": {"name": "Aragorn", "currentLocation": "Rivendell"}})
    assert out["relationships"][0]["weight"] == 1.0  # a new relationship: 1.0 unless given
    assert await edges(graph, "Aragorn", "LOCATED_IN") == [("Rivendell", "Location", 1.0)]
    await npc(mesh, "Legolas")
    out = await faction(mesh, "Fellowship", members=["Aragorn", "Legolas"])
    args = {"faction": {"name": "Fellowship", "members": ["Aragorn", "Legolas"]}, **PROV, "weight": 0.5}
    out = await ok(mesh, "update_faction", args)  # each item's relationship gets it
    assert [r["weight"] for r in out["relationships"]] == [pytest.approx(0.75)] * 2

    for bad in (1.5, -0.1, "heavy"):
        out = await rejected(mesh, "update_npc", {**update, "weight": bad})
        assert out["error_code"] == "INVALID_INPUT"
    out = await rejected(mesh, "update_npc", {"npc": {"name": "Aragorn", "age": 90}, **PROV, "weight": 0.5})
    assert out["error_code"] == "INVALID_INPUT" and out["details"]["field"] == "weight"
    tracking = {"skills": {"name": "Tracking", "type": "Craft"}, **PROV}
    for extra in ({"weight": 0.5}, MERGE):  # a tool that writes no relationships takes neither
        assert (await rejected(mesh, "add_skills", {**tracking, **extra}))["error_code"] == "INVALID_INPUT"
    await ok(mesh, "add_skills", tracking)
    assert await edges(graph, "Aragorn", "LOCATED_IN") == [("Rivendell", "Location", 1.0)]


async def test_reads_give_each_relation_the_strongest_weight_between_its_two_ends(mesh: Client) -> None:
    """MemoryMesh's combineWeights: over parallel relations (same start, same end, different types), the max.
    Direction counts: a relation the other way is not parallel."""
    await place(mesh, "Bree")
    await faction(mesh, "Rangers")
    await npc(mesh, "Aragorn", currentLocation="Bree", weight=0.4)
    await ok(mesh, "update_npc", {"npc": {"name": "Aragorn", "home": "Bree"}, **PROV, "weight": 0.9})
    await npc(mesh, "Halbarad", currentLocation="Rangers", weight=0.1)
    await ok(mesh, "update_faction", {"faction": {"name": "Rangers", "members": ["Halbarad"]}, **PROV, "weight": 0.2})

    def combined(answer: dict[str, Any]) -> dict[tuple[str, str, str], tuple[float, float]]:
        return {
            (r["from"], r["relationType"], r["to"]): (r["properties"]["weight"], r["combined_weight"])
            for r in answer["relations"]
        }

    opened = await ok(mesh, "open_nodes", {"names": ["Aragorn", "Halbarad"]})
    assert combined(opened) == {
        ("Aragorn", "LOCATED_IN", "Bree"): (pytest.approx(0.4), pytest.approx(0.9)),
        ("Aragorn", "LIVES_IN", "Bree"): (pytest.approx(0.9), pytest.approx(0.9)),
        ("Halbarad", "LOCATED_IN", "Rangers"): (pytest.approx(0.1), pytest.approx(0.1)),
        ("Rangers", "HAS_MEMBER", "Halbarad"): (pytest.approx(0.2), pytest.approx(0.2)),
    }
    searched = await ok(mesh, "search_nodes", {"query": "aragorn"})
    assert [r["combined_weight"] for r in searched["relations"]] == [pytest.approx(0.9)] * 2
    walked = await ok(mesh, "read_graph", {"labels": ["Npc"]})
    assert combined(walked) == {k: v for k, v in combined(opened).items() if k[0] != "Rangers"}


def test_the_registrys_own_format_takes_the_same_shapes(tmp_path: Path) -> None:
    """`relationship: {type}` without `to_label`, on a string or an array of strings, and additional_properties."""
    entry = {
        "name": "Guild",
        "additional_properties": True,
        "properties": {
            "name": {"type": "string", "required": True},
            "hall": {"type": "string", "relationship": {"type": "BASED_IN"}},
            "members": {"type": "array", "items": "string", "relationship": {"type": "HAS_MEMBER"}},
        },
    }
    (tmp_path / "guild.json").write_text(json.dumps(entry))
    [guild] = read_sources([tmp_path])
    assert guild.additional_properties and guild.typed_tools
    assert guild.property_types["members"]["relationship"] == {"type": "HAS_MEMBER"}
    entry["properties"]["members"]["items"] = "integer"
    (tmp_path / "guild.json").write_text(json.dumps(entry))
    with pytest.raises(SchemaFileError) as caught:
        read_sources([tmp_path])
    assert "string or array of string" in caught.value.reason

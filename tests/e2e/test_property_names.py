"""Property names under the registry, through a real MCP client session on every engine tier, for every write
path (write_node, write_relationship, their batches, the typed tools, the memory profile), reading the graph
back to prove what was stored: drift remapped to the declared name with a breadcrumb, unknown names kept or
refused by policy (the entry's own, else WRITE_GATE_UNDECLARED_PROPERTY_POLICY), nothing written on a refusal."""

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from tests.conftest import TESTS, ok, open_client, rejected
from write_gate.core.claims import CLAIM_PREFIX
from write_gate.core.cypher.statement import Statement
from write_gate.core.identifiers import PROPERTY_REMAPS_FIELD, PROTECTED_FIELDS
from write_gate.core.registry import UndeclaredPolicy
from write_gate.core.stat_counts import DUE, STAT
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.migrations import migrate
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

SCHEMAS = TESTS / "schemas" / "properties"
PROV = {"source": "crm", "extraction_method": "manual"}


@pytest.fixture
async def registry(graph: GraphBackend) -> GraphBackend:
    await load_into_graph(graph, read_sources([SCHEMAS]))
    return graph


@pytest.fixture
async def client(settings: Settings, registry: GraphBackend) -> AsyncIterator[Client]:
    async with open_client(settings.model_copy(update={"toolsets": "typed"}), "in_process") as c:  # typed listed
        yield c


def node(label: str, name: str, properties: dict[str, Any] | None = None, **keys: Any) -> dict[str, Any]:
    return {"label": label, "merge_keys": keys or {"name": name}, "properties": properties or {}, **PROV}


def knows(properties: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {
        "type": "KNOWS",
        "from_label": "Contact",
        "from_keys": {"name": "Ann"},
        "to_label": "Contact",
        "to_keys": {"name": "Bob"},
        "properties": properties,
        **PROV,
        **changes,
    }


async def stored(graph: GraphBackend, label: str, name: str) -> dict[str, Any] | None:
    """The node's agent-visible properties (no search text, no identity key), or None if absent."""
    rows = await graph.read(
        Statement(f"MATCH (n:{label}) WHERE n.name = $name RETURN properties(n) AS p", {"name": name})
    )
    if not rows:
        return None
    [row] = rows
    gate_owned = ("_f_", "_search", "_grams", "_key", "_rev", "_seq", CLAIM_PREFIX)
    return {k: v for k, v in row["p"].items() if not k.startswith(gate_owned) and k not in (DUE, STAT)}


def agent_written(props: dict[str, Any]) -> dict[str, Any]:
    """Without the gate's stamps and each value's claim."""
    stamps = {*PROTECTED_FIELDS, "_stub", "_rev", "_seq", DUE, STAT}  # a node's stamps; a relationship keeps its weight
    return {k: v for k, v in props.items() if k not in stamps and not k.startswith(CLAIM_PREFIX)}


async def relationship(graph: GraphBackend) -> dict[str, Any] | None:
    rows = await graph.read(Statement("MATCH (:Contact)-[r:KNOWS]->(:Contact) RETURN properties(r) AS p"))
    return agent_written(rows[0]["p"]) if rows else None


# --- write_node ---------------------------------------------------------------------------------------


async def test_write_node_remaps_drift_and_keeps_the_remaps_on_the_node(client: Client, registry: GraphBackend) -> None:
    out = await ok(client, "write_node", node("Contact", "Ann", {"Age": 30, "e_mail": "ann@example.org"}, Name="Ann"))
    assert out["merge_keys"] == {"name": "Ann"}
    assert out["property_remaps"] == ["Name→name", "Age→age", "e_mail→email"]
    assert agent_written(await stored(registry, "Contact", "Ann")) == {
        "name": "Ann",
        "age": 30,
        "email": "ann@example.org",
        PROPERTY_REMAPS_FIELD: ["Name→name", "Age→age", "e_mail→email"],
    }
    # A later write without remaps leaves the record alone; a write with its declared names reports none.
    out = await ok(client, "write_node", node("Contact", "Ann", {"age": 31}))
    assert "property_remaps" not in out  # none: absent, as seed 003's answer has it
    assert (await stored(registry, "Contact", "Ann"))[PROPERTY_REMAPS_FIELD] == ["Name→name", "Age→age", "e_mail→email"]
    # Read tools show it with the node's properties, as they show _schema_remap_from.
    found = await ok(client, "open_nodes", {"names": ["Ann"]})
    assert found["entities"][0]["properties"][PROPERTY_REMAPS_FIELD] == ["Name→name", "Age→age", "e_mail→email"]


async def test_write_node_refusals_write_nothing(client: Client, registry: GraphBackend) -> None:
    out = await rejected(client, "write_node", node("Contact", "Ann", {"age": 1, "shoe_size": 44, "hobby": "chess"}))
    assert out["error_code"] == "SCHEMA_UNKNOWN_PROPERTY"
    assert out["details"] == {
        "label": "Contact",
        "field": "properties",
        "properties": ["shoe_size", "hobby"],
        "known": ["age", "email", "name"],
    }
    assert "chess" not in json.dumps(out)  # names, never values
    out = await rejected(client, "write_node", node("Contact", "Ann", {"email": "a@x", "mail": "b@x"}))
    assert out["error_code"] == "INVALID_INPUT" and out["details"]["reason"] == "same_property"
    for protected in ("Confidence", "extractionMethod"):
        out = await rejected(client, "write_node", node("Contact", "Ann", {protected: 1}))
        assert out["error_code"] == "SCHEMA_PROTECTED_FIELD", protected
    out = await rejected(client, "write_node", node("Contact", "Ann", ID=1))  # an identity key it does not declare
    assert out["error_code"] == "SCHEMA_UNKNOWN_PROPERTY" and out["details"]["field"] == "merge_keys"
    assert await stored(registry, "Contact", "Ann") is None


async def test_remap_keeps_unknown_names_and_allow_is_the_gate_as_it_was(
    client: Client, registry: GraphBackend
) -> None:
    out = await ok(client, "write_node", node("Note", "n1", {"TITLE": "Hi", "mood": "glad"}))
    assert out["property_remaps"] == ["TITLE→title"]
    assert agent_written(await stored(registry, "Note", "n1")) == {
        "name": "n1",
        "title": "Hi",
        "mood": "glad",
        PROPERTY_REMAPS_FIELD: ["TITLE→title"],
    }
    # Loose names no policy: the gate's default, allow, writes names as given.
    out = await ok(client, "write_node", node("Loose", "l1", {"Age": "thirty", "e_mail": "x"}))
    assert "property_remaps" not in out
    assert agent_written(await stored(registry, "Loose", "l1")) == {"name": "l1", "Age": "thirty", "e_mail": "x"}


@pytest.mark.every_transport
async def test_the_gates_setting_applies_to_entries_without_a_policy(
    settings: Settings, registry: GraphBackend, transport: str
) -> None:
    """Over stdio the setting reaches `write-gate serve` as WRITE_GATE_UNDECLARED_PROPERTY_POLICY."""
    strict = settings.model_copy(update={"undeclared_property_policy": UndeclaredPolicy.REJECT})
    async with open_client(strict, transport) as client:
        out = await rejected(client, "write_node", node("Loose", "l1", {"Age": 3, "e_mail": "x"}))
        assert out["error_code"] == "SCHEMA_UNKNOWN_PROPERTY" and out["details"]["properties"] == ["e_mail"]
        assert await stored(registry, "Loose", "l1") is None
        out = await ok(client, "write_node", node("Loose", "l1", {"AGE": 3}))
        assert out["property_remaps"] == ["AGE→age"]
        assert agent_written(await stored(registry, "Loose", "l1"))["age"] == 3
        # An entry's own policy wins: Note remaps and keeps what matches nothing.
        await ok(client, "write_node", node("Note", "n1", {"mood": "glad"}))
        assert (await stored(registry, "Note", "n1"))["mood"] == "glad"
        schema = await ok(client, "get_schema", {})
        assert schema["undeclared_property_policy"] == "reject"
        policies = {e["name"]: e["undeclared_properties"] for e in schema["node_labels"]}
        assert policies["Loose"] == "reject" and policies["Note"] == "remap" and policies["Contact"] == "reject"


# --- write_relationship ----------------------------------------------------------------------------------


async def test_write_relationship_remaps_properties_and_endpoint_keys(client: Client, registry: GraphBackend) -> None:
    for name in ("Ann", "Bob"):
        await ok(client, "write_node", node("Contact", name))
    out = await ok(client, "write_relationship", knows({"From_Year": 2019}, from_keys={"NAME": "Ann"}))
    assert out["property_remaps"] == ["From_Year→since", "from_keys.NAME→name"]
    assert await relationship(registry) == {"since": 2019, "weight": 1.0, PROPERTY_REMAPS_FIELD: ["From_Year→since"]}
    out = await rejected(client, "write_relationship", knows({"since": 2020, "where": "school"}))
    assert out["error_code"] == "SCHEMA_UNKNOWN_PROPERTY" and out["details"]["properties"] == ["where"]
    out = await rejected(client, "write_relationship", knows({"Weight": 0.5}))
    assert out["error_code"] == "SCHEMA_PROTECTED_FIELD"
    assert (await relationship(registry))["since"] == 2019  # unchanged by the refusals


# --- the batches -------------------------------------------------------------------------------------------


async def test_batches_decide_each_item_as_its_single_tool_does(client: Client, registry: GraphBackend) -> None:
    items = [
        node("Contact", "Ann", {"Mail": "ann@x"}),
        node("Contact", "Bob", {"nickname": "B"}),
        node("Contact", "Cy", {"email": "c@x", "E_Mail": "d@x"}),
        node("Note", "n1", {"Title": "T", "mood": "glad"}),
    ]
    out = await ok(client, "write_nodes", {"items": items})
    assert [(i["status"], i.get("property_remaps"), i.get("error_code")) for i in out["items"]] == [
        ("written", ["Mail→email"], None),
        ("rejected", None, "SCHEMA_UNKNOWN_PROPERTY"),
        ("rejected", None, "INVALID_INPUT"),
        ("written", ["Title→title"], None),
    ]
    assert agent_written(await stored(registry, "Contact", "Ann")) == {
        "name": "Ann",
        "email": "ann@x",
        PROPERTY_REMAPS_FIELD: ["Mail→email"],
    }
    assert await stored(registry, "Contact", "Bob") is None and await stored(registry, "Contact", "Cy") is None
    assert agent_written(await stored(registry, "Note", "n1"))["mood"] == "glad"

    await ok(client, "write_node", node("Contact", "Bob"))
    rels = [knows({"FROM_YEAR": 2001}, to_keys={"Name": "Bob"}), knows({"since": 1, "how": "x"})]
    out = await ok(client, "write_relationships", {"items": rels})
    assert [(i["status"], i.get("property_remaps"), i.get("error_code")) for i in out["items"]] == [
        ("written", ["FROM_YEAR→since", "to_keys.Name→name"], None),
        ("rejected", None, "SCHEMA_UNKNOWN_PROPERTY"),
    ]
    assert await relationship(registry) == {"since": 2001, "weight": 1.0, PROPERTY_REMAPS_FIELD: ["FROM_YEAR→since"]}


# --- the typed tools ---------------------------------------------------------------------------------------


async def test_typed_tools_advertise_and_apply_the_same_policy(client: Client, registry: GraphBackend) -> None:
    tools = {t.name: t.input_schema for t in (await client.list_tools()).tools}
    assert tools["add_hero"]["properties"]["hero"]["additionalProperties"] is False  # reject
    assert tools["add_villain"]["properties"]["villain"]["additionalProperties"] is True  # additional: remap

    out = await ok(client, "add_hero", {"hero": {"Name": "Aria", "Job": "Bard"}, **PROV})
    assert out["property_remaps"] == ["Name→name", "Job→role"]
    assert agent_written(await stored(registry, "Hero", "Aria")) == {
        "name": "Aria",
        "role": "Bard",
        PROPERTY_REMAPS_FIELD: ["Name→name", "Job→role"],
    }
    out = await rejected(client, "update_hero", {"hero": {"name": "Aria", "color": "red"}, **PROV})
    assert out["error_code"] == "SCHEMA_UNKNOWN_PROPERTY" and out["details"]["properties"] == ["color"]
    out = await rejected(client, "update_hero", {"hero": {"name": "Aria", "role": "Bard", "JOB": "Monk"}, **PROV})
    assert out["error_code"] == "INVALID_INPUT" and out["details"]["given"] == ["role", "JOB"]
    out = await rejected(client, "update_hero", {"hero": {"name": "Aria", "Confidence": 1.0}, **PROV})
    assert out["error_code"] == "SCHEMA_PROTECTED_FIELD"
    assert (await stored(registry, "Hero", "Aria"))["role"] == "Bard"

    out = await ok(client, "add_villain", {"villain": {"name": "Mord", "Scheme": "rule", "lair": "tower"}, **PROV})
    assert out["property_remaps"] == ["Scheme→scheme"]
    assert agent_written(await stored(registry, "Villain", "Mord")) == {
        "name": "Mord",
        "scheme": "rule",
        "lair": "tower",
        PROPERTY_REMAPS_FIELD: ["Scheme→scheme"],
    }
    assert (await ok(client, "delete_villain", {"villain": {"NAME": "Mord"}}))["status"] == "deleted"
    assert await stored(registry, "Villain", "Mord") is None


# --- the memory profile -------------------------------------------------------------------------------------


async def test_the_memory_profile_is_never_refused_its_observations(settings: Settings, registry: GraphBackend) -> None:
    """Contact rejects undeclared names and does not declare `observations`; the memory profile's writes land."""
    strict = settings.model_copy(update={"undeclared_property_policy": UndeclaredPolicy.REJECT})
    async with open_client(strict, "in_process", profile="memory") as client:
        entities = [
            {"name": "Ann", "entityType": "contact", "observations": ["met at PyCon"]},
            {"name": "Bob", "entityType": "loose", "observations": ["likes tea"]},
            {"name": "Zed", "entityType": "martian", "observations": []},
        ]
        out = await ok(client, "create_entities", {"entities": entities})
        assert [e["entityType"] for e in out["entities"]] == ["Contact", "Loose", "Entity"]
        await ok(client, "create_relations", {"relations": [{"from": "Ann", "to": "Bob", "relationType": "knows"}]})
        await ok(client, "add_observations", {"observations": [{"entityName": "Ann", "contents": ["plays chess"]}]})
    ann = agent_written(await stored(registry, "Contact", "Ann"))
    assert ann["observations"] == ["met at PyCon", "plays chess"] and PROPERTY_REMAPS_FIELD not in ann
    assert (await stored(registry, "Loose", "Bob"))["observations"] == ["likes tea"]
    rows = await registry.read(
        Statement("MATCH (:Contact {name: 'Ann'})-[r:KNOWS]->(:Loose {name: 'Bob'}) RETURN count(r) AS c")
    )
    assert rows == [{"c": 1}]


# --- the registry, read back --------------------------------------------------------------------------------


async def test_get_schema_and_the_resources_show_the_policies_and_absorbs(client: Client) -> None:
    schema = await ok(client, "get_schema", {})
    assert schema["undeclared_property_policy"] == "allow"
    labels = {e["name"]: e for e in schema["node_labels"]}
    assert {n: labels[n]["undeclared_properties"] for n in ("Contact", "Note", "Loose", "Hero", "Villain")} == {
        "Contact": "reject",
        "Note": "remap",
        "Loose": "allow",
        "Hero": "reject",
        "Villain": "allow",  # write_node's policy: the gate's; its typed tools remap (additional_properties)
    }
    assert labels["Contact"]["property_types"]["email"] == {"type": "string", "absorbs": ["e_mail", "mail"]}
    [knows_type] = schema["relationship_types"]
    assert knows_type["undeclared_properties"] == "reject"
    assert knows_type["property_types"]["since"]["absorbs"] == ["from_year"]
    resource = await client.read_resource("write-gate://schema/Contact")
    entry = json.loads(resource.contents[0].text)
    assert entry["undeclared_properties"] == "reject" and entry["property_types"]["email"]["absorbs"] == [
        "e_mail",
        "mail",
    ]


async def test_the_shipped_registries_take_every_memory_write_under_reject(
    settings: Settings, graph: GraphBackend
) -> None:
    """The migrated graph (schemas/core and schemas/memory), with every entry rejecting undeclared names: what
    the memory profile writes (entities of any type, relations, observations) is never refused for a name."""
    await migrate(graph)
    strict = settings.model_copy(update={"undeclared_property_policy": UndeclaredPolicy.REJECT})
    async with open_client(strict, "in_process", profile="memory") as client:
        entities = [
            {"name": name, "entityType": type_, "observations": [f"about {name}"]}
            for name, type_ in (("Ann", "person"), ("Acme", "company"), ("Paris", "city"), ("Zork", "startup"),
                                ("Py", "language"), ("Kick-off", "meeting"))
        ]  # fmt: skip
        out = await ok(client, "create_entities", {"entities": entities})
        assert [e["entityType"] for e in out["entities"]] == [
            "Person", "Organization", "Location", "Entity", "Technology", "Entity",
        ]  # fmt: skip
        relations = [
            {"from": "Ann", "to": "Acme", "relationType": "works at"},
            {"from": "Ann", "to": "Paris", "relationType": "lives in"},
            {"from": "Ann", "to": "Py", "relationType": "uses"},
        ]
        assert len((await ok(client, "create_relations", {"relations": relations}))["relations"]) == 3
        await ok(client, "add_observations", {"observations": [{"entityName": "Zork", "contents": ["pivoted"]}]})
    assert (await stored(graph, "Entity", "Zork"))["observations"] == ["about Zork", "pivoted"]
    rows = await graph.read(Statement("MATCH ({name: 'Ann'})-[r]->() RETURN count(r) AS c"))
    assert rows == [{"c": 3}]

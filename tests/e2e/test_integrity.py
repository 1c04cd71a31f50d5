"""Identity and grants hold through every tool (issue 16, items 5-8 and 10): a merge key cannot be rewritten
through properties, protected fields are protected under any spelling, a delete needs the grant for
everything it removes, and one agent's change is never attributed to another."""

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.conftest import CLIENT_NAME, TESTS, open_client
from write_gate.access.agents import AgentsFile, Grant
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.bundled import bundled
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]
PROV = {"source": "integrity", "extraction_method": "api"}


async def call(client: Client, tool: str, **args: Any) -> tuple[bool, dict[str, Any]]:
    result = await client.call_tool(tool, args)
    return bool(result.is_error), result.structured_content


async def props(graph: GraphBackend, label: str, name: str) -> list[dict[str, Any]]:
    rows = await graph.read(Statement(f"MATCH (n:{label}) WHERE n.name = $n RETURN properties(n) AS p", {"n": name}))
    return [row["p"] for row in rows]


@pytest.fixture
async def gate(settings: Settings, matrix_graph: GraphBackend) -> AsyncIterator[Client]:
    async with open_client(settings, "in_process") as client:
        yield client


# 5, 6: merge keys are identity


@pytest.mark.parametrize(
    "properties",
    [{"name": "Alice"}, {"name": 12345}, {"::name": "Alice"}, {"Name": "Alice"}, {"NAME": "Bob"}],
)
async def test_a_merge_key_cannot_be_rewritten_through_properties(
    gate: Client, graph: GraphBackend, properties: dict[str, Any]
) -> None:
    bob = {"label": "Person", "merge_keys": {"name": "Bob"}, **PROV}
    assert not (await call(gate, "write_node", **bob))[0]
    is_error, out = await call(gate, "write_node", **bob, properties=properties)
    assert is_error and out["error_code"] == "SCHEMA_PROTECTED_FIELD" and out["details"]["reason"] == "merge_key"
    _, batch = await call(gate, "write_nodes", items=[{**bob, "properties": properties}])
    assert batch["items"][0]["error_code"] == "SCHEMA_PROTECTED_FIELD"
    [bob_now] = await props(graph, "Person", "Bob")
    assert not [k for k in bob_now if k.casefold() == "name" and k != "name"]
    assert await props(graph, "Person", "Alice") == []


async def test_repeating_a_merge_key_unchanged_is_harmless(gate: Client, graph: GraphBackend) -> None:
    is_error, _ = await call(
        gate, "write_node", label="Person", merge_keys={"name": "Bob"}, properties={"name": "Bob", "age": 3}, **PROV
    )
    assert not is_error and (await props(graph, "Person", "Bob"))[0]["age"] == 3


# 7: protected fields under any spelling


@pytest.mark.parametrize("field", ["Confidence", "WRITTEN_BY", "Source", "::confidence", "Updated_By", "_stub"])
async def test_protected_fields_are_protected_under_any_spelling(gate: Client, graph: GraphBackend, field: str) -> None:
    node = {"label": "Person", "merge_keys": {"name": "Eve"}, "properties": {field: "forged"}, **PROV}
    is_error, out = await call(gate, "write_node", **node)
    assert is_error and out["error_code"] == "SCHEMA_PROTECTED_FIELD"
    _, batch = await call(gate, "write_nodes", items=[node])
    assert batch["items"][0]["error_code"] == "SCHEMA_PROTECTED_FIELD"
    rel = {
        "type": "KNOWS",
        "from_label": "Person",
        "from_keys": {"name": "Eve"},
        "to_label": "Person",
        "to_keys": {"name": "Eve"},
        "properties": {field: "forged"},
        "endpoint_policy": "merge_endpoints",
        **PROV,
    }
    is_error, out = await call(gate, "write_relationship", **rel)
    assert is_error and out["error_code"] == "SCHEMA_PROTECTED_FIELD"
    is_error, out = await call(gate, "write_relationship", **{**rel, "properties": {"Weight": 0.1}})
    assert is_error and out["error_code"] == "SCHEMA_PROTECTED_FIELD"
    assert await props(graph, "Person", "Eve") == []


async def test_typed_tools_protect_fields_under_any_spelling(settings: Settings, graph: GraphBackend) -> None:
    await load_into_graph(graph, read_sources([bundled("schemas") / "examples" / "rpg"]))
    async with open_client(settings, "in_process") as client:
        is_error, out = await call(client, "add_npc", npc={"name": "Gandalf", "Confidence": 1.0}, **PROV)
    assert is_error and out["error_code"] == "SCHEMA_PROTECTED_FIELD"


# 8: a delete needs the grant for everything it removes


def limited_agent(settings: Settings, tmp_path: Path, grant: Grant) -> Settings:
    agents = AgentsFile.load(tmp_path / "agents.toml")
    agents.add("limited", grant)
    agents.save()
    return settings.model_copy(update={"agents_file": tmp_path / "agents.toml", "agent": "limited"})


async def test_a_typed_delete_needs_the_grant_for_every_relationship_it_removes(
    settings: Settings, graph: GraphBackend, tmp_path: Path
) -> None:
    await load_into_graph(graph, read_sources([bundled("schemas") / "examples" / "rpg"]))
    async with open_client(settings, "in_process") as admin:
        await call(admin, "add_location", location={"name": "Rivendell"}, **PROV)
        is_error, out = await call(
            admin,
            "add_npc",
            npc={"name": "Elrond", "role": "Noble", "status": "Active", "currentLocation": "Rivendell"},
            **PROV,
        )
        assert not is_error, out
    limited = limited_agent(settings, tmp_path, Grant(labels=("Npc",), relationship_types=("MEMBER_OF",)))
    async with open_client(limited, "in_process") as client:
        is_error, out = await call(client, "delete_npc", npc={"name": "Elrond"})
    assert (
        is_error and out["error_code"] == "PERMISSION_DENIED" and out["details"]["relationship_types"] == ["LOCATED_IN"]
    )
    assert len(await props(graph, "Npc", "Elrond")) == 1
    located = await graph.read(Statement("MATCH (:Npc)-[r:LOCATED_IN]->(:Location) RETURN count(r) AS c"))
    assert located[0]["c"] == 1
    granted = limited_agent(settings, tmp_path, Grant(labels=("Npc",), relationship_types=("LOCATED_IN",)))
    async with open_client(granted, "in_process") as client:
        is_error, out = await call(client, "delete_npc", npc={"name": "Elrond"})
    assert not is_error and await props(graph, "Npc", "Elrond") == []


async def test_a_memory_delete_needs_the_grant_for_every_relation_it_removes(
    settings: Settings, graph: GraphBackend, tmp_path: Path
) -> None:
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "memory"]))
    async with open_client(settings, "in_process", profile="memory") as admin:
        await call(admin, "create_entities", entities=[{"name": n, "entityType": "person"} for n in ("A", "B")])
        await call(admin, "create_relations", relations=[{"from": "A", "to": "B", "relationType": "likes"}])
    limited = limited_agent(settings, tmp_path, Grant(relationship_types=("KNOWS",)))
    async with open_client(limited, "in_process", profile="memory") as client:
        is_error, out = await call(client, "delete_entities", entityNames=["A"])
        assert (
            is_error and out["error_code"] == "PERMISSION_DENIED" and out["details"]["relationship_types"] == ["LIKES"]
        )
        assert len(await props(graph, "Person", "A")) == 1
        is_error, out = await call(client, "delete_entities", entityNames=["Nobody"])
        assert not is_error and out["success"] is True


# 10: never attribute one agent's change to another


async def test_observation_edits_by_another_agent_keep_the_claim_and_record_the_change(
    settings: Settings, graph: GraphBackend
) -> None:
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "memory"]))
    alice = settings.model_copy(update={"agent": "alice", "memory_source": "alice-notes"})
    bob = settings.model_copy(update={"agent": "bob", "memory_source": "bob-notes", "memory_reliability": 0.1})
    async with open_client(alice, "in_process", profile="memory") as client:
        await call(client, "create_entities", entities=[{"name": "Ada", "entityType": "person", "observations": ["a"]}])
    [created] = await props(graph, "Person", "Ada")
    async with open_client(bob, "in_process", profile="memory") as client:
        await call(client, "add_observations", observations=[{"entityName": "Ada", "contents": ["b"]}])
        [added] = await props(graph, "Person", "Ada")
        await call(client, "delete_observations", deletions=[{"entityName": "Ada", "observations": ["a"]}])
    [deleted] = await props(graph, "Person", "Ada")
    for after in (added, deleted):
        for field in ("written_by", "source", "extraction_method", "confidence"):
            assert after[field] == created[field], field
        assert after["updated_by"] == "bob" and after["last_updated"] >= created["last_updated"]
    assert created["written_by"] == created["updated_by"] == "alice"
    assert deleted["observations"] == ["b"]


async def ok(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    is_error, out = await call(client, tool, **args)
    assert not is_error, (tool, out)
    return out


async def stamps(graph: GraphBackend) -> tuple[dict[str, tuple[str, str]], dict[tuple[str, str, str], tuple[str, str]]]:
    """Every data node's and relationship's (written_by, updated_by), by name and by (from, type, to)."""
    nodes = await graph.read(
        Statement(
            # Not the gate's own nodes: the registry, and the change and conflict records.
            "MATCH (n) WHERE NOT n:Schema AND NOT n:WriteGateRegistry AND NOT n:WriteGateChange"
            " AND NOT n:WriteGateConflict RETURN n.name AS n, n.written_by AS w, n.updated_by AS u"
        )
    )
    rels = await graph.read(
        Statement(
            "MATCH (a)-[r]->(b) RETURN a.name AS a, type(r) AS t, b.name AS b, r.written_by AS w, r.updated_by AS u"
        )
    )
    return {r["n"]: (r["w"], r["u"]) for r in nodes}, {(r["a"], r["t"], r["b"]): (r["w"], r["u"]) for r in rels}


# The identity each transport takes: in process the configured agent, over stdio the client's handshake name.
WRITERS = {"in_process": "carol", "stdio": None}


@pytest.mark.every_transport
async def test_every_write_path_stamps_the_agent_that_wrote(
    settings: Settings, graph: GraphBackend, transport: str
) -> None:
    """Every tool that writes, in both profiles and typed, stamps who wrote (written_by) and who changed
    (updated_by) on each node and relationship it touches: never another agent, never nothing."""
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "memory", bundled("schemas") / "examples" / "rpg"]))
    writer = settings.model_copy(update={"agent": WRITERS[transport]})
    w = WRITERS[transport] or CLIENT_NAME
    node = {"label": "Person", "merge_keys": {"name": "N1"}, **PROV}
    rel = {
        "type": "KNOWS",
        "from_label": "Person",
        "from_keys": {"name": "N1"},
        "to_label": "Person",
        "to_keys": {"name": "N2"},
        "endpoint_policy": "merge_endpoints",
        **PROV,
    }
    npc = {"npc": {"name": "Gandalf", "role": "Wizard", "status": "Active", "currentLocation": "Shire"}, **PROV}
    async with open_client(writer, transport) as gate, open_client(writer, transport, profile="memory") as memory:
        await ok(gate, "write_node", **node)
        await ok(gate, "write_nodes", items=[{**node, "merge_keys": {"name": "N3"}}])
        await ok(gate, "write_relationship", **rel)
        await ok(gate, "write_relationships", items=[{**rel, "to_keys": {"name": "N4"}}])
        await ok(gate, "add_location", location={"name": "Shire"}, **PROV)
        await ok(gate, "add_npc", **npc)
        people = [{"name": n, "entityType": "person", "observations": ["x"]} for n in ("Ada", "Bob")]
        await ok(memory, "create_entities", entities=people)
        await ok(memory, "create_relations", relations=[{"from": "Ada", "to": "Bob", "relationType": "KNOWS"}])
    nodes, rels = await stamps(graph)
    created = ["N1", "N2", "N3", "N4", "Shire", "Gandalf", "Ada", "Bob"]
    assert nodes == dict.fromkeys(created, (w, w))
    written = [
        ("N1", "KNOWS", "N2"),
        ("N1", "KNOWS", "N4"),
        ("Gandalf", "LOCATED_IN", "Shire"),
        ("Ada", "KNOWS", "Bob"),
    ]
    assert rels == dict.fromkeys(written, (w, w))

    # Another agent changes things: a typed update (its node, its new relationship and the stub it makes) is a
    # new claim; observation edits only record the change (written_by stays the writer's).
    changer = settings.model_copy(update={"agent": "dave"})
    async with open_client(changer, transport) as gate, open_client(changer, transport, profile="memory") as memory:
        moved = {"npc": {"name": "Gandalf", "currentLocation": "Mordor"}, "endpoint_policy": "merge_endpoints"}
        await ok(gate, "update_npc", **moved, **PROV)
        await ok(memory, "add_observations", observations=[{"entityName": "Ada", "contents": ["y"]}])
        await ok(memory, "delete_observations", deletions=[{"entityName": "Bob", "observations": ["x"]}])
    nodes, rels = await stamps(graph)
    changed = {"Gandalf": ("dave", "dave"), "Mordor": ("dave", "dave"), "Ada": (w, "dave"), "Bob": (w, "dave")}
    assert nodes == dict.fromkeys(created, (w, w)) | changed
    moved_rels = {("Gandalf", "LOCATED_IN", "Mordor"): ("dave", "dave")}
    assert rels == dict.fromkeys(written[:2] + written[3:], (w, w)) | moved_rels

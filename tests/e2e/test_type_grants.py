"""Relationship-type grants (issue 26, item 8), through real MCP clients: an agent granted
`WORKS_FOR` alone is refused every other type on every path that writes a relationship (write_relationship(s),
a typed tool's links, create_relations, set_entity_parent, merge_entities' and compress_graph's re-pointing,
import_graph, a replay of a quarantined call), and is let through with `WORKS_FOR` on the same paths, so the refusal
is the grant's. The grant is decided above the engine (the tier rule in tests/conftest.py): the embedded engine only.

Each refusal below names the type it refused: with `Grant.check_types` letting every type through, every test here
but the last (the endpoints' labels) fails; with any one service's check taken out, one of them does."""

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.conftest import MATRIX_SCHEMAS, TESTS, ok, open_client, rejected
from write_gate.access.agents import AgentsFile, Grant
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.bundled import bundled
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = pytest.mark.anyio

PROV = {"source": "hr-system", "extraction_method": "api", "reliability": 0.8}
RPG = bundled("schemas") / "examples" / "rpg"
CHILD_OF = TESTS / "schemas" / "child_of"
HR = Grant(relationship_types=("WORKS_FOR",))  # every tool, every label, one relationship type


def agents_file(path: Path, **grants: Grant) -> Path:
    agents = AgentsFile(path, {})
    for agent_id, grant in grants.items():
        agents.add(agent_id, grant)
    agents.save()
    return path


def as_agent(settings: Settings, path: Path, agent: str) -> Settings:
    return settings.model_copy(update={"agents_file": path, "agent": agent})


def ref(label: str, name: str) -> dict[str, Any]:
    return {"label": label, "merge_keys": {"name": name}}


def rel(type_: str, start: tuple[str, str], end: tuple[str, str]) -> dict[str, Any]:
    return {
        "type": type_,
        "from_label": start[0],
        "from_keys": {"name": start[1]},
        "to_label": end[0],
        "to_keys": {"name": end[1]},
        **PROV,
    }


def refused_types(answer: dict[str, Any]) -> tuple[str, list[str]]:
    return answer["error_code"], answer["details"].get("relationship_types", [])


async def edges(graph: GraphBackend) -> set[tuple[str, str, str]]:
    rows = await graph.read(Statement("MATCH (a)-[r]->(b) RETURN a.name AS a, type(r) AS t, b.name AS b"))
    return {(row["a"], row["t"], row["b"]) for row in rows}


@pytest.fixture
async def registry(graph: GraphBackend) -> GraphBackend:
    """People and organisations (WORKS_FOR, KNOWS), the hierarchy's CHILD_OF, and the rpg's typed tools (LOCATED_IN)."""
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS, CHILD_OF, RPG]))
    return graph


async def people(admin: Client, *names: str) -> None:
    for name in names:
        await ok(admin, "write_node", {"label": "Person", "merge_keys": {"name": name}, **PROV})


async def test_the_gate_tools_refuse_every_type_but_the_granted_one(
    settings: Settings, registry: GraphBackend, tmp_path: Path
) -> None:
    path = agents_file(tmp_path / "agents.toml", hr=HR)
    async with open_client(settings, "in_process") as admin:  # an agent the file does not list: trusted (stdio)
        await people(admin, "Ada", "Bob", "Alicia", "Alice", "Carol")
        await ok(admin, "write_node", {"label": "Organization", "merge_keys": {"name": "Acme"}, **PROV})
        await ok(admin, "add_location", {"location": {"name": "Rivendell"}, **PROV})
        await ok(admin, "write_relationship", rel("KNOWS", ("Person", "Alicia"), ("Person", "Bob")))
        await ok(admin, "write_relationship", rel("WORKS_FOR", ("Person", "Carol"), ("Organization", "Acme")))
    before = await edges(registry)
    async with open_client(as_agent(settings, path, "hr"), "in_process") as hr:
        # write_relationship
        knows = await rejected(hr, "write_relationship", rel("KNOWS", ("Person", "Ada"), ("Person", "Bob")))
        assert refused_types(knows) == ("PERMISSION_DENIED", ["KNOWS"])
        await ok(hr, "write_relationship", rel("WORKS_FOR", ("Person", "Ada"), ("Organization", "Acme")))
        # write_relationships: per item
        items = [
            rel("KNOWS", ("Person", "Bob"), ("Person", "Ada")),
            rel("WORKS_FOR", ("Person", "Bob"), ("Organization", "Acme")),
        ]
        batch = await ok(hr, "write_relationships", {"items": items})
        assert [(item["status"], item.get("error_code")) for item in batch["items"]] == [
            ("rejected", "PERMISSION_DENIED"),
            ("written", None),
        ]
        # a typed tool's link: add_npc's currentLocation is a LOCATED_IN
        npc = {"name": "Elrond", "role": "Noble", "status": "Active"}
        linked = await rejected(hr, "add_npc", {"npc": {**npc, "currentLocation": "Rivendell"}, **PROV})
        assert refused_types(linked) == ("PERMISSION_DENIED", ["LOCATED_IN"])
        await ok(hr, "add_npc", {"npc": npc, **PROV})  # the same call without the link: the label is granted
        # set_entity_parent writes the hierarchy's CHILD_OF
        parent = await rejected(hr, "set_entity_parent", {"entityName": "Ada", "parentName": "Bob"})
        assert refused_types(parent) == ("PERMISSION_DENIED", ["CHILD_OF"])
        # merge_entities moves the merged node's relationships to the survivor: Alicia KNOWS Bob
        moved = await rejected(
            hr, "merge_entities", {"survivor": ref("Person", "Alice"), "merged": [ref("Person", "Alicia")]}
        )
        assert refused_types(moved) == ("PERMISSION_DENIED", ["KNOWS"])
        # Carol's only relationship is a WORKS_FOR: merging her moves that type alone, which the grant allows
        await ok(hr, "merge_entities", {"survivor": ref("Person", "Alice"), "merged": [ref("Person", "Carol")]})
    after = await edges(registry)
    assert {edge for edge in after - before if edge[1] != "WORKS_FOR"} == set()
    assert {("Ada", "WORKS_FOR", "Acme"), ("Bob", "WORKS_FOR", "Acme"), ("Alice", "WORKS_FOR", "Acme")} <= after
    assert ("Alicia", "KNOWS", "Bob") in after  # not moved


async def test_create_relations_refuses_every_type_but_the_granted_one(
    settings: Settings, registry: GraphBackend, tmp_path: Path
) -> None:
    path = agents_file(tmp_path / "agents.toml", hr=HR)
    async with open_client(as_agent(settings, path, "hr"), "in_process", "memory") as hr:
        entities = [{"name": "Ada", "entityType": "Person", "observations": []}]
        entities.append({"name": "Acme", "entityType": "Organization", "observations": []})
        await ok(hr, "create_entities", {"entities": entities})
        knows = await rejected(
            hr, "create_relations", {"relations": [{"from": "Ada", "to": "Ada", "relationType": "knows"}]}
        )
        [item] = knows["details"]["rejected"]  # the memory profile's batches are all or nothing
        assert (knows["error_code"], *refused_types(item)) == ("PERMISSION_DENIED", "PERMISSION_DENIED", ["KNOWS"])
        works = {"relations": [{"from": "Ada", "to": "Acme", "relationType": "works_for"}]}
        assert len((await ok(hr, "create_relations", works))["relations"]) == 1
    assert await edges(registry) == {("Ada", "WORKS_FOR", "Acme")}


async def test_compress_graph_stops_at_the_merge_the_grant_refuses(
    settings: Settings, registry: GraphBackend, tmp_path: Path
) -> None:
    """compress_graph merges group after group: the first (Carl's WORKS_FOR moved) is merged, the second (Alicia's
    KNOWS) refused, and the refusal says where it stopped and what was merged before; a dry run is refused alike."""
    path = agents_file(tmp_path / "agents.toml", hr=HR)
    names = ("Carol Jones", "Carl Jones", "Alice Smith", "Alicia Smith", "Bob")
    people = [{"name": name, "entityType": "Person", "observations": ["staff"]} for name in names]
    async with open_client(settings, "in_process", "memory") as admin:
        await ok(admin, "create_entities", {"entities": [*people, {"name": "Acme", "entityType": "Organization"}]})
        relations = [("Carl Jones", "Acme", "works for"), ("Alicia Smith", "Bob", "knows")]
        await ok(
            admin, "create_relations", {"relations": [{"from": a, "to": b, "relationType": t} for a, b, t in relations]}
        )
    async with open_client(as_agent(settings, path, "hr"), "in_process", "memory") as hr:
        for args in ({"dryRun": True}, {}):
            stopped = await rejected(hr, "compress_graph", args)
            assert refused_types(stopped) == ("PERMISSION_DENIED", ["KNOWS"])
            assert stopped["details"]["stopped_at"] == ["Alice Smith", "Alicia Smith"]
            assert stopped["details"]["merged_before"] == [{"kept": "Carol Jones", "merged": ["Carl Jones"]}]
    after = await edges(registry)
    assert ("Carol Jones", "WORKS_FOR", "Acme") in after and ("Alicia Smith", "KNOWS", "Bob") in after


async def test_import_graph_refuses_every_type_but_the_granted_one(
    settings: Settings, registry: GraphBackend, tmp_path: Path
) -> None:
    path = agents_file(tmp_path / "agents.toml", hr=HR)
    lines = [
        {"type": "entity", "name": "Ada", "entityType": "Person"},
        {"type": "entity", "name": "Bob", "entityType": "Person"},
        {"type": "entity", "name": "Acme", "entityType": "Organization"},
        {"type": "relation", "from": "Ada", "to": "Bob", "relationType": "KNOWS"},
        {"type": "relation", "from": "Ada", "to": "Acme", "relationType": "WORKS_FOR"},
    ]
    data = "\n".join(json.dumps(line) for line in lines)
    async with open_client(as_agent(settings, path, "hr"), "in_process") as hr:
        dry = await ok(hr, "import_graph", {"format": "jsonl", "data": data, "dryRun": True})
        assert [(e["line"], e["error_code"]) for e in dry["errors"]] == [(4, "PERMISSION_DENIED")]
        answer = await ok(hr, "import_graph", {"format": "jsonl", "data": data})
    assert (answer["entitiesCreated"], answer["relationsCreated"]) == (3, 1)
    assert [(e["line"], e["error_code"]) for e in answer["errors"]] == [(4, "PERMISSION_DENIED")]
    assert await edges(registry) == {("Ada", "WORKS_FOR", "Acme")}


async def test_a_replay_refuses_every_type_but_the_granted_one(
    settings: Settings, registry: GraphBackend, tmp_path: Path
) -> None:
    """Both calls were kept when their endpoints were missing, while the agent could write any type; the replay
    runs them under the grant as it is now: WORKS_FOR alone."""
    path = agents_file(tmp_path / "agents.toml", hr=Grant(), operator=Grant())
    async with open_client(as_agent(settings, path, "hr"), "in_process") as hr:
        for call in (
            rel("KNOWS", ("Person", "Ada"), ("Person", "Bob")),
            rel("WORKS_FOR", ("Person", "Ada"), ("Organization", "Acme")),
        ):
            assert (await rejected(hr, "write_relationship", call))["error_code"] == "ENDPOINT_NOT_FOUND"
    agents_file(path, hr=HR, operator=Grant())
    async with open_client(as_agent(settings, path, "operator"), "in_process") as operator:
        await people(operator, "Ada", "Bob")
        await ok(operator, "write_node", {"label": "Organization", "merge_keys": {"name": "Acme"}, **PROV})
        replayed = await ok(operator, "replay_quarantine", {"agent": "hr"})
    knows, works = replayed["outcomes"]  # oldest first
    assert (knows["status"], *refused_types(knows["result"])) == ("rejected", "PERMISSION_DENIED", ["KNOWS"])
    assert (works["status"], works["result"]["type"]) == ("written", "WORKS_FOR")
    assert await edges(registry) == {("Ada", "WORKS_FOR", "Acme")}


async def test_a_write_that_may_create_its_endpoints_needs_their_labels_too(
    settings: Settings, registry: GraphBackend, tmp_path: Path
) -> None:
    """Any type, Person alone: linking existing nodes needs no label grant; creating an Organization stub does."""
    path = agents_file(tmp_path / "agents.toml", people=Grant(labels=("Person",)))
    async with open_client(settings, "in_process") as admin:
        await people(admin, "Ada")
        await ok(admin, "write_node", {"label": "Organization", "merge_keys": {"name": "Acme"}, **PROV})
    async with open_client(as_agent(settings, path, "people"), "in_process") as client:
        await ok(client, "write_relationship", rel("WORKS_FOR", ("Person", "Ada"), ("Organization", "Acme")))
        stub = {
            **rel("WORKS_FOR", ("Person", "Ada"), ("Organization", "Initech")),
            "endpoint_policy": "merge_endpoints",
        }
        refused = await rejected(client, "write_relationship", stub)
        assert (refused["error_code"], refused["details"]["labels"]) == ("PERMISSION_DENIED", ["Organization"])
        batch = await ok(client, "write_relationships", {"items": [stub]})
        assert [(item["status"], item.get("error_code")) for item in batch["items"]] == [
            ("rejected", "PERMISSION_DENIED")
        ]
    assert await edges(registry) == {("Ada", "WORKS_FOR", "Acme")}

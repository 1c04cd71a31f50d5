"""Merge-key identity is a property of the gate, not of an engine's index: for generated names (white
space at either edge, empty, Unicode normalisation forms, control characters, very long) every write
path, single and batch, gate and memory profile, makes exactly one node per key, and reads, searches,
observation edits and deletes all find it. Runs on every engine tier."""

import unicodedata
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mcp import Client

from tests.conftest import TESTS, open_client
from write_gate.core.cypher.statement import Statement
from write_gate.core.identity import identity_key
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

# Everything JSON can carry that an engine stores: no NUL, no lone surrogates (both are INVALID_INPUT).
names = st.one_of(
    st.sampled_from(["", " ", "  Spaced  ", " Spaced", "Spaced ", "\t", "tab\t", "Émile", "x" * 5000, "\x01ctl"]),
    st.text(alphabet=st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=30),
)
PROV = {"source": "identity-test", "extraction_method": "api"}


@pytest.fixture
async def clients(settings: Settings, graph: GraphBackend) -> AsyncIterator[tuple[Client, Client, GraphBackend]]:
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "memory"]))
    async with (
        open_client(settings, "in_process") as gate,
        open_client(settings, "in_process", profile="memory") as memory,
    ):
        yield gate, memory, graph


async def ok(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, (tool, result.structured_content)
    return result.structured_content


async def count(graph: GraphBackend, label: str, name: str) -> int:
    statement = Statement(
        f"MATCH (n:{label}) WHERE n._key = $key RETURN count(n) AS c", {"key": identity_key({"name": name})}
    )
    return (await graph.read(statement))[0]["c"]


async def nodes_named(graph: GraphBackend, name: str) -> int:
    """Every node whose name property is exactly `name`, found without any index."""
    rows = await graph.read(Statement("MATCH (n) WHERE n.name = $name RETURN count(n) AS c", {"name": name}))
    return rows[0]["c"]


async def searched(client: Client, label: str, query: str, name: str) -> bool:
    cursor = None
    while True:
        args = {"query": query, "labels": [label], "limit": 1000, **({"cursor": cursor} if cursor else {})}
        page = await ok(client, "search_nodes", **args)
        if any(e["name"] == name for e in page["entities"]):
            return True
        if (cursor := page["next_cursor"]) is None:
            return False


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=names)
@example(name=" Spaced ")
@example(name="")
@example(name=unicodedata.normalize("NFD", "Émile"))
async def test_one_node_per_key_on_every_write_path(clients: tuple[Client, Client, GraphBackend], name: str) -> None:
    gate, memory, graph = clients
    person = {"label": "Person", "merge_keys": {"name": name}, **PROV}

    # The gate profile: single, then batch (a key twice in one batch too), then a relationship's stub end.
    for _ in range(2):
        await ok(gate, "write_node", **person, properties={"age": 1})
    out = await ok(gate, "write_nodes", items=[person, {**person, "properties": {"age": 2}}])
    assert out["written"] == 2
    assert await count(graph, "Person", name) == 1 and await nodes_named(graph, name) == 1
    opened = await ok(gate, "open_nodes", names=[name])
    assert [e["name"] for e in opened["entities"]] == [name] and opened["entities"][0]["properties"]["age"] == 2
    assert await searched(gate, "Person", name, name)
    rel = {
        "type": "WORKS_AT",
        "from_label": "Person",
        "from_keys": {"name": name},
        "to_label": "Organization",
        "to_keys": {"name": name},
        "endpoint_policy": "merge_endpoints",
        **PROV,
    }
    for _ in range(2):
        await ok(gate, "write_relationship", **rel)
    await ok(gate, "write_relationships", items=[rel, rel])
    assert await count(graph, "Organization", name) == 1
    rels = await graph.read(
        Statement(
            "MATCH (:Person {_key: $k})-[r:WORKS_AT]->(:Organization {_key: $k}) RETURN count(r) AS c",
            {"k": identity_key({"name": name})},
        )
    )
    assert rels[0]["c"] == 1

    # The memory profile: the name is taken (across labels), so a create skips it; edits and the delete
    # reach the one node.
    created = await memory.call_tool("create_entities", {"entities": [{"name": name, "entityType": "person"}]})
    assert not created.is_error and created.structured_content["entities"] == []
    added = await ok(memory, "add_observations", observations=[{"entityName": name, "contents": ["seen"]}])
    assert added["results"][0]["addedObservations"] == ["seen"]
    await ok(memory, "delete_observations", deletions=[{"entityName": name, "observations": ["seen"]}])
    await ok(memory, "delete_entities", entityNames=[name])
    assert await count(graph, "Person", name) == 0 and (await ok(memory, "open_nodes", names=[name]))["entities"] == []

    # Created by the memory profile this time, twice: one node, then deleted again.
    for _ in range(2):
        await ok(memory, "create_entities", entities=[{"name": name, "entityType": "person", "observations": ["o"]}])
    assert await count(graph, "Person", name) == 1
    [entity] = (await ok(memory, "open_nodes", names=[name]))["entities"]
    assert entity["observations"] == ["o"]
    await ok(memory, "delete_entities", entityNames=[name])
    await ok(memory, "delete_entities", entityNames=[name])  # the Organization stub of the same name
    assert await nodes_named(graph, name) == 0

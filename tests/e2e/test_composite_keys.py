"""A label identified by two properties (City: name and country), through the MCP client on every engine: one node
per combination whatever the order the keys come in, relationships whose endpoints are found by both keys, reads
that tell the two Springfields apart, and deletes that take both keys and remove only that node."""

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from tests.conftest import COMPOSITE_SCHEMAS, open_client
from write_gate.core.cypher.statement import Statement
from write_gate.core.identity import identity_key
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

PROV = {"source": "atlas", "extraction_method": "manual"}
US = {"name": "Springfield", "country": "US"}
CA = {"name": "Springfield", "country": "CA"}


@pytest.fixture
async def client(settings: Settings, graph: GraphBackend) -> AsyncIterator[Client]:
    await load_into_graph(graph, read_sources([COMPOSITE_SCHEMAS]))
    async with open_client(settings, "in_process") as opened:
        yield opened


async def call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    out = result.structured_content
    assert result.is_error == (out.get("status") == "rejected"), out
    return out


def city(keys: dict[str, Any], **properties: Any) -> dict[str, Any]:
    return {"label": "City", "merge_keys": keys, "properties": properties, **PROV}


async def cities(graph: GraphBackend) -> list[dict[str, Any]]:
    return await graph.read(
        Statement(
            "MATCH (c:City) RETURN c.name AS name, c.country AS country, c.population AS population, c._key AS key "
            "ORDER BY country"
        )
    )


async def links(graph: GraphBackend) -> list[tuple[str, str, str]]:
    rows = await graph.read(
        Statement(
            "MATCH (a)-[r]->(b:City) RETURN a.name + '/' + coalesce(a.country, '') AS a, type(r) AS t, b.country AS b"
        )
    )
    return sorted((row["a"], row["t"], row["b"]) for row in rows)


async def test_one_node_per_combination_of_both_keys(client: Client, graph: GraphBackend) -> None:
    await call(client, "write_node", city(US, population=1))
    await call(client, "write_node", city(CA))
    # The same two keys in the other order, and through the batch tool: the same node, updated.
    await call(client, "write_node", city({"country": "US", "name": "Springfield"}, population=2))
    batch = await call(client, "write_nodes", {"items": [city(US, population=3), city(CA, population=4)]})
    assert (batch["written"], batch["rejected"]) == (2, 0)
    half = await call(client, "write_node", city({"name": "Springfield"}))
    assert half["error_code"] == "SCHEMA_MISSING_REQUIRED_PROPERTY"
    assert await cities(graph) == [
        {"name": "Springfield", "country": "CA", "population": 4, "key": identity_key(CA)},
        {"name": "Springfield", "country": "US", "population": 3, "key": identity_key(US)},
    ]


async def test_relationship_endpoints_are_found_by_both_keys(client: Client, graph: GraphBackend) -> None:
    await call(client, "write_node", city(US))
    lives = {"type": "LIVES_IN", "from_label": "Person", "to_label": "City", **PROV}
    merged = await call(
        client,
        "write_relationship",
        {**lives, "from_keys": {"name": "Homer"}, "to_keys": US, "endpoint_policy": "merge_endpoints"},
    )
    assert merged["stub_endpoints"] == ["from"]  # the US Springfield was found, not made again
    # Same name, other country: no such node, so fail_if_missing refuses and nothing is created.
    missing = await call(client, "write_relationship", {**lives, "from_keys": {"name": "Homer"}, "to_keys": CA})
    assert missing["error_code"] == "ENDPOINT_NOT_FOUND" and missing["details"]["missing"] == ["to"]
    twinned = {"type": "TWINNED_WITH", "from_label": "City", "to_label": "City", **PROV}
    await call(
        client, "write_relationship", {**twinned, "from_keys": US, "to_keys": CA, "endpoint_policy": "merge_endpoints"}
    )
    batch = await call(
        client,
        "write_relationships",
        {"items": [{**lives, "from_keys": {"name": "Marge"}, "to_keys": {"country": "US", "name": "Springfield"}}]},
    )
    assert batch["items"][0]["error_code"] == "ENDPOINT_NOT_FOUND"  # Marge was never written
    assert await links(graph) == [("Homer/", "LIVES_IN", "US"), ("Springfield/US", "TWINNED_WITH", "CA")]
    assert [c["country"] for c in await cities(graph)] == ["CA", "US"]


async def test_reads_tell_the_two_apart(client: Client) -> None:
    await call(client, "write_node", city(US, population=30_000))
    await call(client, "write_node", city(CA, population=100))
    await call(
        client,
        "write_relationship",
        {"type": "TWINNED_WITH", "from_label": "City", "to_label": "City", "from_keys": US, "to_keys": CA, **PROV},
    )
    opened = await call(client, "open_nodes", {"names": ["Springfield"]})
    found = sorted((e["properties"]["country"], e["properties"].get("population")) for e in opened["entities"])
    assert found == [("CA", 100), ("US", 30_000)]
    assert [(r["from"], r["relationType"], r["to"]) for r in opened["relations"]] == [
        ("Springfield", "TWINNED_WITH", "Springfield")
    ]
    searched = await call(client, "search_nodes", {"query": "springf"})
    assert sorted(e["properties"]["country"] for e in searched["entities"]) == ["CA", "US"]
    whole = await call(client, "read_graph", {})
    assert sorted(e["properties"]["country"] for e in whole["entities"]) == ["CA", "US"]


async def test_a_delete_takes_both_keys_and_removes_only_that_node(client: Client, graph: GraphBackend) -> None:
    for keys in (US, CA):
        await call(client, "add_city", {"city": {**keys, "population": 1}, **PROV})
    await call(
        client,
        "write_relationship",
        {"type": "TWINNED_WITH", "from_label": "City", "to_label": "City", "from_keys": US, "to_keys": CA, **PROV},
    )
    with_one_key = await client.call_tool("delete_city", {"city": {"name": "Springfield"}})
    assert with_one_key.is_error  # the tool's schema requires both; nothing is deleted
    absent = await call(client, "delete_city", {"city": {"name": "Springfield", "country": "UK"}})
    assert absent["error_code"] == "ENTITY_NOT_FOUND"
    deleted = await call(client, "delete_city", {"city": CA})
    assert deleted == {"status": "deleted", "label": "City", "merge_keys": CA}
    assert [c["country"] for c in await cities(graph)] == ["US"]
    assert await links(graph) == []  # its relationship went with it

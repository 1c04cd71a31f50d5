"""The gate profile's read tools through a real MCP client: paging, filters, neighbours, schema, errors."""

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from tests.conftest import open_client
from write_gate.backends import GraphBackend
from write_gate.config import Settings
from write_gate.cypher import Statement

pytestmark = pytest.mark.anyio


@pytest.fixture
async def client(settings: Settings, matrix_graph: GraphBackend) -> AsyncIterator[Client]:
    async with open_client(settings, "in_process") as client:
        yield client


async def call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.structured_content
    return result.structured_content


async def write(client: Client, label: str, name: str, **props: Any) -> None:
    args = {
        "label": label,
        "merge_keys": {"name": name},
        "properties": props,
        "source": "t",
        "extraction_method": "api",
    }
    assert not (await client.call_tool("write_node", args)).is_error


async def link(client: Client, a: str, b: str, kind: str = "KNOWS", to_label: str = "Person") -> None:
    args = {
        "type": kind,
        "from_label": "Person",
        "from_keys": {"name": a},
        "to_label": to_label,
        "to_keys": {"name": b},
        "source": "t",
        "extraction_method": "api",
    }
    assert not (await client.call_tool("write_relationship", args)).is_error


async def test_walking_a_1000_node_graph_by_cursor_sees_every_node_and_relation_once(
    client: Client, graph: GraphBackend
) -> None:
    people = [{"name": f"p{i:04d}", "i": i} for i in range(1000)]
    await graph.write(Statement("UNWIND $rows AS row CREATE (:Person {name: row.name, i: row.i})", {"rows": people}))
    await graph.write(
        Statement("MATCH (a:Person), (b:Person) WHERE b.i = a.i + 1 AND a.i % 10 = 0 CREATE (a)-[:KNOWS]->(b)")
    )
    seen: list[str] = []
    relations: list[tuple[str, str]] = []
    cursor, pages = None, 0
    while True:
        page = await call(client, "read_graph", limit=64, **({"cursor": cursor} if cursor else {}))
        assert len(page["entities"]) <= 64
        seen += [e["name"] for e in page["entities"]]
        relations += [(r["from"], r["to"]) for r in page["relations"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert pages == 16
    assert sorted(seen) == sorted(p["name"] for p in people) and len(seen) == len(set(seen))
    assert sorted(relations) == sorted((f"p{i:04d}", f"p{i + 1:04d}") for i in range(0, 1000, 10))


async def test_default_page_is_100(client: Client, graph: GraphBackend) -> None:
    rows = [{"name": f"n{i}"} for i in range(150)]
    await graph.write(Statement("UNWIND $rows AS row CREATE (:Person {name: row.name})", {"rows": rows}))
    page = await call(client, "read_graph")
    assert len(page["entities"]) == 100 and page["next_cursor"]
    rest = await call(client, "read_graph", cursor=page["next_cursor"])
    assert len(rest["entities"]) == 50 and rest["next_cursor"] is None


async def test_labels_filter_and_registry_nodes_are_never_listed(client: Client) -> None:
    await write(client, "Person", "Ada")
    await write(client, "Organization", "Acme")
    everything = await call(client, "read_graph")
    assert sorted(e["name"] for e in everything["entities"]) == ["Acme", "Ada"]  # no :Schema nodes
    only = await call(client, "read_graph", labels=["Organization"])
    assert [e["entityType"] for e in only["entities"]] == ["Organization"]


async def test_entities_carry_provenance(client: Client) -> None:
    await write(client, "Person", "Ada", age=36)
    [ada] = (await call(client, "open_nodes", names=["Ada"]))["entities"]
    assert ada["labels"] == ["Person"] and ada["properties"]["age"] == 36
    assert ada["properties"]["source"] == "t" and ada["properties"]["confidence"] == 0.5
    assert ada["properties"]["extraction_method"] == "api" and "last_updated" in ada["properties"]


async def test_search_pages_matches_and_filters_by_label(client: Client) -> None:
    for i in range(5):
        await write(client, "Person", f"match-{i}")
    await write(client, "Organization", "match-org")
    await write(client, "Person", "other")
    first = await call(client, "search_nodes", query="MATCH", limit=4)
    second = await call(client, "search_nodes", query="MATCH", limit=4, cursor=first["next_cursor"])
    names = [e["name"] for e in first["entities"] + second["entities"]]
    assert sorted(names) == sorted([f"match-{i}" for i in range(5)] + ["match-org"]) and second["next_cursor"] is None
    people = await call(client, "search_nodes", query="match", labels=["Person"])
    assert len(people["entities"]) == 5


async def test_search_finds_text_in_lists_and_neighbours_come_along(client: Client) -> None:
    await write(client, "Person", "Ada", observations=["Wrote the first program"])
    await write(client, "Person", "Charles")
    await link(client, "Ada", "Charles")
    result = await call(client, "search_nodes", query="first PROGRAM")
    assert [e["name"] for e in result["entities"]] == ["Ada", "Charles"]
    assert result["relations"] == [
        {"from": "Ada", "to": "Charles", "relationType": "KNOWS", "properties": result["relations"][0]["properties"]}
    ]
    assert result["relations"][0]["properties"]["source"] == "t"


async def test_a_cursor_from_elsewhere_is_invalid_input(client: Client) -> None:
    for cursor in ["garbage", "eyJrIjogInNlYXJjaCIsICJhZnRlciI6IDF9"]:  # the second is a search cursor
        result = await client.call_tool("read_graph", {"cursor": cursor})
        assert result.is_error and result.structured_content["error_code"] == "INVALID_INPUT"


async def test_query_text_is_a_parameter(client: Client, graph: GraphBackend) -> None:
    await write(client, "Person", "Ada")
    for query in ["') MATCH (n) DETACH DELETE n //", "\\", "'", '"', "`"]:
        assert (await call(client, "search_nodes", query=query))["entities"] == []
    assert len(await graph.read(Statement("MATCH (n:Person) RETURN n"))) == 1


async def test_get_schema_has_entries_and_live_counts(client: Client) -> None:
    await write(client, "Person", "Ada")
    await write(client, "User", "Bob")
    await write(client, "Organization", "Acme")
    await link(client, "Ada", "Acme", "WORKS_FOR", "Organization")
    schema = await call(client, "get_schema")
    labels = {entry["name"]: entry for entry in schema["node_labels"]}
    assert labels["Person"]["count"] == 2 and labels["Organization"]["count"] == 1 and labels["Entity"]["count"] == 0
    assert labels["Person"]["merge_keys"] == ["name"] and "User" in labels["Person"]["absorbs"]
    assert labels["Person"]["property_types"]["age"] == {"type": "integer"}
    assert labels["Entity"]["fallback"] is True and schema["fallback_label"] == "Entity"
    types = {entry["name"]: entry for entry in schema["relationship_types"]}
    assert types["WORKS_FOR"]["count"] == 1 and types["WORKS_FOR"]["from_labels"] == ["Person"]
    assert schema["extraction_methods"] == ["api", "llm", "manual", "parsed"]
    assert schema["unknown_label_policy"] == "remap"


async def test_search_prefilter_never_hides_a_current_match(client: Client, graph: GraphBackend) -> None:
    """Overwritten values may linger in the prefilter text (extra candidates for the exact test), but a
    current value is always found, and the prefilter's own field is never shown."""
    await write(client, "Person", "Ada", motto="first draft")
    await write(client, "Person", "Ada", motto="Analytical Engine")
    assert [e["name"] for e in (await call(client, "search_nodes", query="engine"))["entities"]] == ["Ada"]
    assert (await call(client, "search_nodes", query="first draft"))["entities"] == []
    await graph.write(Statement("CREATE (:Person {name: 'Direct', motto: 'written around the gate'})"))
    assert [e["name"] for e in (await call(client, "search_nodes", query="AROUND"))["entities"]] == ["Direct"]
    [ada] = (await call(client, "open_nodes", names=["Ada"]))["entities"]
    assert "_search" not in ada["properties"]

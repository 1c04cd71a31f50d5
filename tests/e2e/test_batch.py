"""write_nodes / write_relationships: the same outcomes and the same graph as one write_node /
write_relationship call per item, per-item rejections in mixed batches, and 10,000 items in one call."""

import uuid
from typing import Any

import pytest
from mcp import Client

from tests.conftest import MATRIX_SCHEMAS, is_bolt_tier, open_client
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.services import pipeline
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]


def node(name: Any, label: str = "Person", **changes: Any) -> dict[str, Any]:
    return {
        "label": label,
        "merge_keys": {"name": name},
        "properties": {"age": 30},
        "source": "batch",
        "extraction_method": "manual",
        "reliability": 0.9,
        **changes,
    }


NODES = [
    node("Alice"),
    node("Bob", ":person"),
    node("Zed", "ZZZNonexistent"),
    node("Carol", properties={"confidence": 1.0}),  # protected
    node("Dan", properties={"age": "old"}),  # type mismatch
    node("Eve", extraction_method="vibes"),
    node("Mallory", "Person`) DETACH DELETE n //"),
    {"label": "Person"},  # not even the schema
    node("Acme", "Company", properties={}),
    node("Alice", properties={"age": 31}),  # the same key again: one node, the later values
]
RELS = [
    {
        "type": "WORKS_FOR",
        "from_label": "Person",
        "from_keys": {"name": "Alice"},
        "to_label": "Organization",
        "to_keys": {"name": "Acme"},
        "source": "batch",
        "extraction_method": "api",
        "weight": 0.5,
    },
    {
        "type": "EMPLOYED_BY",
        "from_label": "Person",
        "from_keys": {"name": "Bob"},
        "to_label": "Organization",
        "to_keys": {"name": "Acme"},
        "source": "batch",
        "extraction_method": "api",
    },
    {
        "type": "DIRECTED",
        "from_label": "Person",
        "from_keys": {"name": "Alice"},
        "to_label": "Person",
        "to_keys": {"name": "Bob"},
        "source": "batch",
        "extraction_method": "api",
    },
    {
        "type": "KNOWS",
        "from_label": "Person",
        "from_keys": {"name": "Alice"},
        "to_label": "Person",
        "to_keys": {"name": "Nobody"},
        "source": "batch",
        "extraction_method": "api",
    },
    {
        "type": "KNOWS",
        "from_label": "Person",
        "from_keys": {"name": "Alice"},
        "to_label": "Person",
        "to_keys": {"name": "Stub"},
        "source": "batch",
        "extraction_method": "api",
        "endpoint_policy": "merge_endpoints",
    },
    {
        "type": "WORKS_FOR",
        "from_label": "Person",
        "from_keys": {"name": "Alice"},
        "to_label": "Organization",
        "to_keys": {"name": "Acme"},
        "source": "batch",
        "extraction_method": "api",
        "weight": 0.9,
    },
]
COMPARED = ("status", "label", "confidence", "remapped_from", "error_code")


async def graph_state(backend: GraphBackend) -> tuple[list, list, list, list]:
    """The data, the history of its changes (each write's id and time aside), and the quarantine's entries
    (a batch keeps each rejected item as the single call it stands for; ids, order, times and the messages,
    which name an item rather than the arguments, aside)."""
    nodes = await backend.read(
        Statement(
            "MATCH (n) WHERE NOT n:Schema AND NOT n:WriteGateRegistry AND NOT n:WriteGateChange\n"
            "  AND NOT n:WriteGateQuarantine\n"
            "RETURN labels(n) AS l, properties(n) AS p"
        )
    )
    kept = await backend.read(
        Statement(
            "MATCH (q:WriteGateQuarantine) RETURN q.tool AS tool, q.agent AS agent, q.error_code AS code, "
            "q.labels AS labels, q.arguments AS arguments"
        )
    )
    changes = await backend.read(Statement("MATCH (h:WriteGateChange) RETURN properties(h) AS p"))
    rels = await backend.read(
        Statement("MATCH (a)-[r]->(b) RETURN a.name AS a, type(r) AS t, b.name AS b, properties(r) AS p")
    )

    def strip(p: dict) -> dict:
        """Without the times of the writes: when a node or value was written, its order (a time, or after one),
        each claim's last item."""
        timeless = {
            k: v
            for k, v in p.items()
            if k not in ("last_updated", "created_at", "_seq", "seq", "seq_n", "seq_k", "seq_k1")
        }
        return {
            k: [c[:-1] for c in v]
            if k.endswith("claims")
            else v[:-1]
            if k.startswith("_p_") or k.endswith("claim")
            else v
            for k, v in timeless.items()
        }

    return (
        sorted((row["l"], sorted(strip(row["p"]).items())) for row in nodes),
        sorted((row["a"], row["t"], row["b"], sorted(strip(row["p"]).items())) for row in rels),
        sorted(repr(sorted(strip({**row["p"], "change_id": None, "at": None}).items())) for row in changes),
        sorted(repr(sorted(row.items())) for row in kept),
    )


async def fresh_graph(settings: Settings) -> Settings:
    name = f"t_{uuid.uuid4().hex[:12]}"
    other = settings.model_copy(update={"graph_name": name})
    if is_bolt_tier(other):  # the double runs each database on a FalkorDB graph of that name
        other = other.model_copy(update={"memgraph_database": name})
    backend = await open_backend(other)
    if other.backend.value == "memgraph" and not is_bolt_tier(other):
        await backend.write(Statement("MATCH (n) DETACH DELETE n"))
    await load_into_graph(backend, read_sources([MATRIX_SCHEMAS]))
    await backend.close()
    return other


async def single(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    out = result.structured_content
    label = out.get("label") or out.get("type")
    return {
        "status": out["status"],
        "label": label,
        "confidence": out.get("confidence"),
        "remapped_from": out.get("remapped_from"),
        "error_code": out.get("error_code"),
    }


@pytest.mark.parametrize("chunk_items", [pipeline.CHUNK_ITEMS, 2], ids=["one-chunk", "chunks-of-2"])
async def test_batches_match_single_calls_item_by_item(
    settings: Settings, chunk_items: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In one statement, or in many (each chunk decided while the one before is written): the same answers,
    the same graph, the same history as one single call per item."""
    monkeypatch.setattr(pipeline, "CHUNK_ITEMS", chunk_items)
    if settings.backend.value == "memgraph" and not is_bolt_tier(settings):
        pytest.skip("Memgraph runs one database: the two graphs compared here would be one")
    one, many = await fresh_graph(settings), await fresh_graph(settings)
    async with open_client(one, "in_process") as client:
        singles = [await single(client, "write_node", args) for args in NODES]
        singles += [await single(client, "write_relationship", args) for args in RELS]
    async with open_client(many, "in_process") as client:
        nodes = (await client.call_tool("write_nodes", {"items": NODES})).structured_content
        rels = (await client.call_tool("write_relationships", {"items": RELS})).structured_content
    batched = [{k: item.get(k) for k in COMPARED} for item in nodes["items"] + rels["items"]]
    assert batched == singles
    assert [item["index"] for item in nodes["items"]] == list(range(len(NODES)))
    assert (nodes["written"], nodes["rejected"]) == (5, 5) and (rels["written"], rels["rejected"]) == (4, 2)
    assert rels["items"][5]["weight"] == pytest.approx(0.7) and rels["items"][4]["stub_endpoints"] == ["to"]
    b1, b2 = await open_backend(one), await open_backend(many)
    try:
        assert await graph_state(b1) == await graph_state(b2)
    finally:
        await b1.close()
        await b2.close()


async def test_a_rejected_item_names_its_reason(settings: Settings, matrix_graph: GraphBackend) -> None:
    async with open_client(settings, "in_process") as client:
        out = (await client.call_tool("write_nodes", {"items": NODES})).structured_content
        shapeless = (await client.call_tool("write_relationships", {"items": [{"type": "KNOWS"}]})).structured_content
    # An item that fits no input schema names the single tool's it should fit (a relationship's named write_node's).
    assert shapeless["items"][0]["message"] == "the item does not match write_relationship's input schema"
    codes = {item["index"]: item.get("error_code") for item in out["items"]}
    assert codes == {
        0: None,
        1: None,
        2: None,
        3: "SCHEMA_PROTECTED_FIELD",
        4: "SCHEMA_TYPE_MISMATCH",
        5: "INVALID_EXTRACTION_METHOD",
        6: "INVALID_INPUT",
        7: "INVALID_INPUT",
        8: None,
        9: None,
    }
    # Each item answers what it has, no nulls: a written one no error fields, a rejected one no write's.
    assert all(None not in item.values() for item in out["items"])
    assert {key for item in out["items"] if item["status"] == "rejected" for key in item} == {
        "index", "status", "error_code", "message", "details"
    }  # fmt: skip
    assert [
        n["p"] for n in await matrix_graph.read(Statement("MATCH (n:Person {name: 'Alice'}) RETURN n.age AS p"))
    ] == [31]


async def test_10000_items_in_one_call(settings: Settings, matrix_graph: GraphBackend) -> None:
    items = [node(f"n{i:05d}", properties={"i": i}) for i in range(10_000)]
    async with open_client(settings, "in_process") as client:
        out = (await client.call_tool("write_nodes", {"items": items})).structured_content
    assert out["written"] == 10_000 and out["rejected"] == 0
    [row] = await matrix_graph.read(Statement("MATCH (n:Person) RETURN count(n) AS c, sum(n.i) AS s"))
    assert (row["c"], row["s"]) == (10_000, sum(range(10_000)))


@pytest.mark.one_tier  # the engine fact is FalkorDB's (Dialect.merges_in_reverse); Memgraph pages by `_key`
async def test_a_batch_lists_what_it_created_in_the_order_given(settings: Settings, matrix_graph: GraphBackend) -> None:
    """FalkorDB's MERGE in an UNWIND gives what it creates its ids last row first, and read_graph pages by id: a
    batch (an import of memory-mcp's file is one) was listed backwards, where one write at a time is not."""
    names = ["Carol", "Alice", "Bob"]
    pairs = [("Carol", "Alice"), ("Alice", "Bob"), ("Bob", "Carol")]
    ends = ("from_label", "from_keys", "to_label", "to_keys")
    knows = [
        {"type": "KNOWS", **dict(zip(ends, ("Person", {"name": a}, "Person", {"name": b}), strict=True)),
         "source": "batch", "extraction_method": "api"}
        for a, b in pairs
    ]  # fmt: skip
    async with open_client(settings, "in_process") as client:
        written = (await client.call_tool("write_nodes", {"items": [node(n) for n in names]})).structured_content
        related = (await client.call_tool("write_relationships", {"items": knows})).structured_content
        graph = (await client.call_tool("read_graph", {})).structured_content
    assert [item["status"] for item in written["items"] + related["items"]] == ["written"] * 6
    assert [e["name"] for e in graph["entities"]] == names
    assert [(r["from"], r["to"]) for r in graph["relations"]] == pairs

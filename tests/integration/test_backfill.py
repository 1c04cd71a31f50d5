"""The identity backfill (migration 0003) on every engine: nodes written before `_key` existed, by an older gate or by
hand, get their `_key`, folded search text and label fold; duplicates that raw-value indexes let MERGE create keep a
key of their own; a node with no merge key at all stays reachable; and the gate then finds each by its keys."""

from typing import Any

import pytest

from tests.conftest import COMPOSITE_SCHEMAS, open_client
from write_gate.core.cypher.idempotency import IDEMPOTENCY_LABEL
from write_gate.core.cypher.statement import Statement
from write_gate.core.feed_windows import SEQ_KEY, SEQ_NUMBER, seq_key, seq_number
from write_gate.core.history import CHANGE_LABEL
from write_gate.core.identity import identity_key
from write_gate.engines import GraphBackend
from write_gate.services.change_feed import feed_page
from write_gate.serving.config import Settings
from write_gate.store.backfill import backfill_identity
from write_gate.store.history_order import backfill_change_keys, backfill_feed_windows
from write_gate.store.idempotency_pruning import prune_idempotency
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

OLD_NODES = [
    ("Person", {"name": "Émile", "age": 40}),
    ("Person", {"name": "Bob"}),
    ("Person", {"name": "Bob", "age": 7}),  # a duplicate identity
    ("Person", {"age": 1}),  # no merge key ever written
    ("City", {"name": "Springfield", "country": "US", "_schema_remap_from": ":Town"}),
]


async def keyed(graph: GraphBackend) -> list[dict[str, Any]]:
    return await graph.read(
        Statement(
            "MATCH (n) WHERE n:Person OR n:City\n"
            "RETURN id(n) AS id, n.name AS name, n.age AS age, n._key AS key, n._f_name AS folded,\n"
            "       n._f__label AS label_fold, n._search AS search ORDER BY id"
        )
    )


async def test_old_nodes_get_their_identity_and_the_gate_finds_them(settings: Settings, graph: GraphBackend) -> None:
    await load_into_graph(graph, read_sources([COMPOSITE_SCHEMAS]))
    for label, props in OLD_NODES:
        await graph.write(Statement(f"CREATE (n:{label}) SET n = $props", {"props": props}))
    if graph.dialect.name == "falkordb":
        await graph.ensure_index("Person", "name")  # the old index on a raw value, which the backfill drops

    assert await backfill_identity(graph) == len(OLD_NODES)

    emile, bob, bob_again, nameless, city = await keyed(graph)
    assert emile["key"] == identity_key({"name": "Émile"}) and emile["folded"] == ["émile"]
    assert emile["label_fold"] == ["person"] and "émile" in emile["search"]
    assert bob["key"] == identity_key({"name": "Bob"})
    assert bob_again["key"] == identity_key({"_duplicate_of": bob["key"], "_node": bob_again["id"]})
    assert nameless["key"] == identity_key({"_node": nameless["id"]})
    assert city["key"] == identity_key({"name": "Springfield", "country": "US"})
    assert city["label_fold"] == ["city", "town"]  # the type it was written as stays searchable
    assert await backfill_identity(graph) == 0  # nothing left without a key: a second run changes nothing
    if graph.dialect.name == "falkordb":
        indexes = await graph.read(Statement("CALL db.indexes() YIELD label, properties RETURN label, properties"))
        # On `_key` (and `_search` and `_grams`, the searches' full-text index from the schema load, and `_due`, the
        # statistics' fold's), no longer on `name`.
        assert {"label": "Person", "properties": ["_key", "_search", "_grams", "_due"]} in indexes

    async with open_client(settings, "in_process") as client:
        written = await client.call_tool(
            "write_node",
            {
                "label": "Person",
                "merge_keys": {"name": "Émile"},
                "properties": {"age": 41},
                "source": "t",
                "extraction_method": "manual",
            },
        )
        assert not written.is_error, written.structured_content
        searched = await client.call_tool("search_nodes", {"query": "ÉMILE"})
        town = await client.call_tool("search_nodes", {"query": "town"})
    rows = await graph.read(Statement("MATCH (n:Person {name: 'Émile'}) RETURN n.age AS age"))
    assert rows == [{"age": 41}]  # the old node was found by its new key, not written again
    assert [e["name"] for e in searched.structured_content["entities"]] == ["Émile"]
    assert [e["name"] for e in town.structured_content["entities"]] == ["Springfield"]


async def test_old_change_records_get_their_number_and_the_feed_answers_them(graph: GraphBackend) -> None:
    """Migration 0013: records written before `seq_n` get it, and the feed's windows find them."""
    seqs = [f"2026-11-28T10:00:{i % 60:02d}.{i:03d}Z" + "#" * (i % 2) for i in range(25)]
    rows = [{"seq": seq, "at": seq[:24], "change_id": f"c{i:02d}", "label": "Person"} for i, seq in enumerate(seqs)]
    await graph.write(Statement(f"UNWIND $rows AS row CREATE (h:{CHANGE_LABEL}) SET h += row", {"rows": rows}))
    await graph.ensure_index(CHANGE_LABEL, SEQ_NUMBER)

    assert await backfill_feed_windows(graph) == len(rows)

    numbered = await graph.read(Statement(f"MATCH (h:{CHANGE_LABEL}) RETURN h.seq AS seq, h.{SEQ_NUMBER} AS n"))
    assert sorted((r["seq"], r["n"]) for r in numbered) == sorted((s, seq_number(s)) for s in seqs)
    page = await feed_page(graph.read, "", "", "2026-11-28T10:01:00.000Z", None, 10)
    assert [row["change_id"] for row in page] == [r["change_id"] for r in sorted(rows, key=lambda r: r["seq"])][:10]


async def test_old_change_records_get_their_keys_and_keep_their_order_inside_a_crowded_millisecond(
    graph: GraphBackend,
) -> None:
    """Migration 0020: records written before `seq_k` (a batch's 40 records in one millisecond, a few `#`s after
    it) get their `seq`'s key, the first item's of a statement, so small pages read the millisecond by its keys
    and answer them in the order they had, by change id within their `seq`, from a cursor written before."""
    at = "2026-11-28T10:00:00.123Z"
    seqs = [at + "#" * (i % 5 == 0) for i in range(40)]
    rows = [
        {"seq": seq, "at": at, "change_id": f"c{(i * 17) % 40:02d}", "label": "Person"} for i, seq in enumerate(seqs)
    ]
    await graph.write(Statement(f"UNWIND $rows AS row CREATE (h:{CHANGE_LABEL}) SET h += row", {"rows": rows}))
    for prop in (SEQ_NUMBER, SEQ_KEY)[: None if graph.dialect.two_ranges_in_one_scan else -1]:
        await graph.ensure_index(CHANGE_LABEL, prop)  # as migration 0020 makes them
    await backfill_feed_windows(graph)  # 0013 numbered them (without keys then: they have them now, as 0020 gives)
    await graph.write(Statement(f"MATCH (h:{CHANGE_LABEL}) REMOVE h.{SEQ_KEY}"))

    assert await backfill_change_keys(graph) == len(rows)

    keys = await graph.read(Statement(f"MATCH (h:{CHANGE_LABEL}) RETURN h.seq AS seq, h.{SEQ_KEY} AS key"))
    assert sorted((r["seq"], r["key"]) for r in keys) == sorted((s, seq_key(s)) for s in seqs)
    order = [r["change_id"] for r in sorted(rows, key=lambda r: (r["seq"], r["change_id"]))]
    horizon, answered, cursor = "2026-11-28T10:01:00.000Z", [], ("", "")
    while page := await feed_page(graph.read, cursor[0], cursor[1], horizon, None, 3):  # a cap of 24 records
        answered += [row["change_id"] for row in page]
        cursor = (page[-1]["seq"], page[-1]["change_id"])  # as a cursor from before the keys holds it
    assert answered == order


async def test_old_safe_retries_records_get_their_number_and_the_prune_takes_them(graph: GraphBackend) -> None:
    """Migration 0013: a safe retries' record claimed before `seq_n` gets its `at`'s, so the prune, which reads
    the number's window, finds it (without one it would never go)."""
    ats = ["2026-11-20T10:00:00.000Z", "2026-11-27T10:00:00.000Z", "2026-11-28T10:00:00.000Z"]
    rows = [{"id": f"k{i}", "at": at, "state": "done"} for i, at in enumerate(ats)]
    await graph.write(Statement(f"UNWIND $rows AS row CREATE (k:{IDEMPOTENCY_LABEL}) SET k += row", {"rows": rows}))
    await graph.ensure_index(IDEMPOTENCY_LABEL, SEQ_NUMBER)
    assert await prune_idempotency(graph, "2026-11-28T00:00:00.000Z") == 0  # not numbered: out of the window

    assert await backfill_feed_windows(graph) == len(rows)

    assert await prune_idempotency(graph, "2026-11-28T00:00:00.000Z") == 2
    left = await graph.read(Statement(f"MATCH (k:{IDEMPOTENCY_LABEL}) RETURN k.id AS id, k.{SEQ_NUMBER} AS n"))
    assert left == [{"id": "k2", "n": seq_number(ats[2])}]

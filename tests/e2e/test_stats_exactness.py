"""`get_graph_stats` is exact (issue 35, item 3): after random sequences of tool calls through real MCP clients
(single and batch writes at several reliabilities, relationships, archive and restore, tags, importance, parents,
conflicts resolved either way, merges; the memory profile's creates, observations added and deleted, deletes of
entities and relations, imports; from two agents and the memory profile), its answer equals the one the full scan
computes. Statistics kept as the graph changes must keep this: each kind is a write path of its own. The oracle
below is the scan the statistics were first computed by, kept here as written then: every node of every
registered label, every relationship."""

import json
import random
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.conftest import MATRIX_SCHEMAS, every_toolset, ok, open_client
from write_gate.core import statistics as pure
from write_gate.core.cypher.statement import Statement
from write_gate.core.registry import ConflictPolicy
from write_gate.engines import GraphBackend
from write_gate.services import stat_counts
from write_gate.services.statistics import get_graph_stats, graph_stats
from write_gate.serving.assembly import open_gate
from write_gate.serving.config import Settings
from write_gate.store.graph_registry import GraphRegistrySource
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

_BUCKET = (
    "CASE WHEN {v}.confidence IS NULL THEN null WHEN {v}.confidence >= 1 THEN 9 WHEN {v}.confidence <= 0 THEN 0"
    " ELSE toInteger({v}.confidence * 10) END"
)
_DAY = "substring(coalesce({v}.created_at, {v}.last_updated), 0, 10)"
_DIMENSIONS = (
    "[['agent', {v}.written_by], ['source', {v}.source], ['confidence', " + _BUCKET + "], ['day', " + _DAY + "]"
)
_TALLY = (
    "RETURN {part} AS {key}, d[0] AS dimension, d[1] AS value, count(*) AS count,\n"
    "       min({v}.confidence) AS low, max({v}.confidence) AS high,"
    # Summed in billionths, as the statistics do: a sum of floats differs in its last bits with its order.
    " sum(toInteger(floor({v}.confidence * (1000 * 1000 * 1000) + 0.5))) AS total"
)


def _node_scan(labels: tuple[str, ...]) -> str:
    return "\nUNION ALL\n".join(
        f"MATCH (n:`{label}`) WHERE n._alias_of IS NULL\n"
        f"UNWIND {_DIMENSIONS.format(v='n')}, ['archived', n._archived_at IS NOT NULL]] AS d\n"
        + _TALLY.format(part=part, key="part", v="n")
        for part, label in enumerate(labels)
    )


_RELATIONSHIP_SCAN = (
    "MATCH ()-[r]->() WHERE type(r) IN $types\n"
    f"UNWIND [['count', null]] + {_DIMENSIONS.format(v='r')}] AS d\n" + _TALLY.format(part="type(r)", key="name", v="r")
)


def _ends_scan(labels: tuple[str, ...]) -> str:
    return "\nUNION ALL\n".join(
        f"MATCH (n:`{label}`) WHERE n._alias_of IS NULL AND n.last_updated IS NOT NULL\n"
        f"WITH n ORDER BY n.last_updated {order}, n._key {order} LIMIT 1\n"
        f"RETURN {part} AS part, '{end}' AS end, n.name AS name, n._key AS key, n.last_updated AS at"
        for part, label in enumerate(labels)
        for end, order in (("oldest", "ASC"), ("newest", "DESC"))
    )


async def scanned_stats(graph: GraphBackend) -> dict[str, Any]:
    """The answer as the full scan computes it."""
    registry = await GraphRegistrySource(graph).load()
    labels = tuple(registry.all_canonical_labels())
    entities = pure.tally(await graph.read(Statement(_node_scan(labels))), "archived", labels)
    types = registry.all_relationship_types()
    relations = pure.tally(await graph.read(Statement(_RELATIONSHIP_SCAN, {"types": types})), "count")
    ends = pure.extremes(await graph.read(Statement(_ends_scan(labels))), labels)
    open_conflicts = "MATCH (c:WriteGateConflict) WHERE c.status = 'open' RETURN count(c) AS n"
    [conflicts] = await graph.read(Statement(open_conflicts))
    return graph_stats(entities, relations, ends, conflicts["n"]).model_dump(mode="json")


LABELS = ("Person", "Organization")
NAMES = [f"e{i}" for i in range(8)]
SOURCES = ("hr", "wiki", "crm")
METHODS = ("api", "manual", "llm")
TYPES = ("KNOWS", "WORKS_FOR")


RELIABILITIES = (0.1, 0.5, 0.9)  # varied, so the confidences (buckets, min, mean, max) are


def _node(rng: random.Random) -> dict[str, Any]:
    return {
        "label": rng.choice(LABELS),
        "merge_keys": {"name": rng.choice(NAMES)},
        # `note` differs between writers, so keep_both leaves open conflicts for resolve_conflict to settle.
        "properties": {"tags": [rng.choice(("old", "new"))], "note": rng.choice(("x", "y"))},
        "source": rng.choice(SOURCES),
        "extraction_method": rng.choice(METHODS),
        "reliability": rng.choice(RELIABILITIES),
    }


def _link(rng: random.Random) -> dict[str, Any]:
    return {
        "type": rng.choice(TYPES),
        "from_label": "Person",
        "from_keys": {"name": rng.choice(NAMES)},
        "to_label": rng.choice(LABELS),
        "to_keys": {"name": rng.choice(NAMES)},
        "source": rng.choice(SOURCES),
        "extraction_method": rng.choice(METHODS),
        "reliability": rng.choice(RELIABILITIES),
        "endpoint_policy": rng.choice(("fail_if_missing", "merge_endpoints")),
    }


def _import(rng: random.Random) -> dict[str, Any]:
    names = rng.sample(NAMES, 3)
    lines = [{"type": "entity", "name": n, "entityType": rng.choice(LABELS), "observations": ["in"]} for n in names]
    lines.append({"type": "relation", "from": names[0], "to": names[1], "relationType": "KNOWS"})
    return {"format": "jsonl", "data": "\n".join(json.dumps(line) for line in lines)}


async def _memory_call(rng: random.Random, memory: Client, kind: str) -> tuple[str, dict[str, Any]]:
    """The memory profile's writes (its creates and observation edits take paths of their own)."""
    a, b = rng.sample(NAMES, 2)
    if kind == "entities":
        entities = [{"name": n, "entityType": rng.choice(LABELS), "observations": ["seen"]} for n in (a, b)]
        return "create_entities", {"entities": entities}
    if kind == "relations":  # between two people, made so first (a relation needs both ends)
        people = [{"name": n, "entityType": "Person", "observations": ["met"]} for n in (a, b)]
        await memory.call_tool("create_entities", {"entities": people})
        return "create_relations", {"relations": [{"from": a, "to": b, "relationType": "KNOWS"}]}
    if kind == "observe":
        return "add_observations", {"observations": [{"entityName": a, "contents": [rng.choice(("o1", "o2"))]}]}
    if kind == "unobserve":
        return "delete_observations", {"deletions": [{"entityName": a, "observations": ["o1", "seen", "in"]}]}
    if kind == "delete":
        return "delete_entities", {"entityNames": [a, b]}
    if kind == "unlink":
        return "delete_relations", {"relations": [{"from": a, "to": b, "relationType": rng.choice(TYPES)}]}
    return "import_graph", _import(rng)


def _named(rng: random.Random) -> dict[str, Any]:
    """An entity by name and label (a name may be held under both)."""
    return {"entityName": rng.choice(NAMES), "entityType": rng.choice(LABELS)}


async def _resolve(rng: random.Random, gate: Client) -> tuple[str, dict[str, Any]]:
    """An open conflict settled either way (or, with none open, one listed: a read)."""
    conflicts = (await ok(gate, "list_conflicts", {"status": "open"}))["conflicts"]
    if not conflicts:
        return "list_conflicts", {}
    picked = rng.choice(conflicts)
    return "resolve_conflict", {"conflict_id": picked["conflict_id"], "pick": rng.choice(("current", "incoming"))}


async def _call(rng: random.Random, gates: list[Client], memory: Client) -> tuple[Client, str, dict[str, Any]]:
    gate = rng.choice(gates)
    kind = rng.choice(
        (
            *("node", "node", "nodes", "link", "links", "archive", "restore", "merge"),
            *("tags", "importance", "parent", "unparent", "resolve"),
            *("entities", "relations", "observe", "unobserve", "delete", "unlink", "import"),
        )
    )
    if kind == "node":
        return gate, "write_node", _node(rng)
    if kind == "nodes":
        return gate, "write_nodes", {"items": [_node(rng) for _ in range(rng.randint(2, 5))]}
    if kind == "link":
        return gate, "write_relationship", _link(rng)
    if kind == "links":
        return gate, "write_relationships", {"items": [_link(rng) for _ in range(rng.randint(2, 4))]}
    if kind == "archive":
        return gate, "archive_entities", {"tags": [rng.choice(("old", "new"))]}
    if kind == "restore":
        return gate, "restore_entities", {"entityNames": [rng.choice(NAMES)]}
    if kind == "tags":
        return gate, "add_tags", {**_named(rng), "tags": [rng.choice(("old", "new"))]}
    if kind == "importance":
        return gate, "set_importance", {**_named(rng), "importance": rng.choice((1, 5, 9))}
    if kind in ("parent", "unparent"):
        parent = {"parentName": rng.choice(NAMES), "parentType": "Person"} if kind == "parent" else {"parentName": None}
        return gate, "set_entity_parent", {"entityName": rng.choice(NAMES), "entityType": "Person", **parent}
    if kind == "resolve":
        return gate, *await _resolve(rng, gate)
    if kind == "merge":
        a, b = rng.sample(NAMES, 2)
        label = rng.choice(("Person", "Person", "Organization"))
        return (
            gate,
            "merge_entities",
            {
                "survivor": {"label": label, "merge_keys": {"name": a}},
                "merged": [{"label": label, "merge_keys": {"name": b}}],
            },
        )
    return memory, *await _memory_call(rng, memory, kind)


# Seeds whose 96 calls reach every kind of change and leave relationships (checked below); 6 left none once every
# write of the hierarchy's type (KNOWS here) kept one parent per child.
@pytest.mark.parametrize("seed", [1, 8])
async def test_the_stats_equal_the_full_scan_after_random_tool_calls(
    settings: Settings, graph: GraphBackend, seed: int
) -> None:
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS]))
    # A node under two labels counts under each; one without confidence or times counts where it has values.
    await graph.write(Statement("CREATE (:Person:Organization {_key: 'twin', name: 'twin', written_by: 'raw'})"))
    rng = random.Random(seed)
    # The hierarchy's parent links are KNOWS (Person to Person): relationships the statistics count.
    # One gate's keeper folds every 200 ms, racing the calls' own folds: a chunk either lands whole or is read
    # again (a keeper in each of the three gates did the same, for three times the statements on the Bolt double).
    update = {"conflict_policy": ConflictPolicy.KEEP_BOTH, "hierarchy_type": "KNOWS", "stats_fold_seconds": 0}
    base = every_toolset(settings).model_copy(update=update)
    keeper = {"stats_fold_seconds": 0.2}
    async with (
        open_client(base.model_copy(update={"agent": "bot-a", **keeper}), "in_process") as bot_a,
        open_client(base.model_copy(update={"agent": "bot-b"}), "in_process") as bot_b,
        open_client(base.model_copy(update={"agent": "bot-m"}), "in_process", profile="memory") as memory,
    ):
        done: dict[str, int] = {}
        for step in range(96):
            client, tool, args = await _call(rng, [bot_a, bot_b], memory)
            result = await client.call_tool(tool, args)  # a refusal (an absent entity, say): still compared
            done[tool] = done.get(tool, 0) + (not result.is_error)
            if step % 8 == 7:
                answer = await ok(bot_a, "get_graph_stats", {})
                assert answer == await scanned_stats(graph), (step, tool)
        answer = await ok(bot_a, "get_graph_stats", {})
    # The seeds reach every kind of change (each at least once).
    kinds = {"write_nodes", "write_relationships", "archive_entities", "restore_entities", "merge_entities"}
    kinds |= {"add_tags", "set_importance", "set_entity_parent", "resolve_conflict"}
    kinds |= {"create_entities", "create_relations", "add_observations", "delete_observations"}
    kinds |= {"delete_entities", "delete_relations", "import_graph"}
    assert kinds <= {tool for tool, n in done.items() if n}
    assert answer["totalEntities"] > 0 and answer["totalRelations"] > 0
    assert answer["entityTypesCounts"]["Organization"] >= 1  # the twin, at least


async def test_a_graph_from_before_the_counters_is_walked_once_and_scanned_until_then(
    settings: Settings, graph: GraphBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Entities and relationships written before the writes kept counts (no mark on any) are counted once the
    graph's one walk is over; until then every answer is the full scan's, and the walk goes on where it stopped,
    a few pages a call."""
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS]))
    await graph.write(
        Statement(
            "UNWIND range(1, 40) AS i\n"
            "CREATE (n:Person {_key: toString(i), name: 'old ' + toString(i), written_by: 'before',"
            " source: CASE WHEN i % 3 = 0 THEN 'wiki' ELSE 'crm' END, confidence: i / 41.0,"
            " created_at: '2026-01-0' + toString(i % 9 + 1) + 'T00:00:00.000Z',"
            " last_updated: '2026-02-' + toString(10 + i % 17) + 'T00:00:00.000Z'})"
        )
    )
    await graph.write(
        Statement(
            "MATCH (a:Person), (b:Person) WHERE toInteger(a._key) + 1 = toInteger(b._key)\n"
            "CREATE (a)-[:KNOWS {written_by: 'before', source: 'crm', confidence: 0.5}]->(b)"
        )
    )
    monkeypatch.setattr(stat_counts, "MARK_PAGE", 7)
    monkeypatch.setattr(stat_counts, "PAGES_A_READ", 1)
    calls = 0
    async with open_gate(settings) as gate:  # no keeper: only the calls walk
        while True:
            calls += 1
            ready = await graph.read(Statement("MATCH (m:_StatMeta) RETURN m.ready AS ready"))
            answer = (await get_graph_stats(gate)).model_dump(mode="json")
            assert answer == await scanned_stats(graph), calls
            if ready and ready[0]["ready"]:
                break
        assert calls > 3  # the walk took several calls (its pages of 7 nodes)
        counters = await graph.read(Statement("MATCH (c:_StatCount) RETURN sum(c.count) AS n"))
        assert counters[0]["n"] > 0  # the last answers came from the counters
        assert answer["totalEntities"] == 40 and answer["totalRelations"] == 39
        await graph.write(Statement("MATCH (n:Person {_key: '40'}) SET n.source = 'moved'"))  # around the gate
        assert (await get_graph_stats(gate)).entitiesBySource["crm"] == answer["entitiesBySource"]["crm"]


async def test_a_served_gate_folds_what_the_writes_marked_without_being_asked(
    settings: Settings, graph: GraphBackend
) -> None:
    """The keeper (WRITE_GATE_STATS_FOLD_SECONDS) folds the writes' marks in the background, so a get_graph_stats
    after a burst of writes finds nothing left to fold."""
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS]))
    due = Statement("MATCH (n:Person) WHERE n._due = 1 RETURN count(n) AS n")
    async with open_client(settings.model_copy(update={"stats_fold_seconds": 0.05}), "in_process") as client:
        await ok(client, "write_nodes", {"items": [_node(random.Random(i)) for i in range(20)]})
        with anyio.fail_after(10):
            while (await graph.read(due))[0]["n"]:
                await anyio.sleep(0.05)
        counted = await graph.read(Statement("MATCH (c:_StatCount {dim: 'archived'}) RETURN sum(c.count) AS n"))
        assert counted[0]["n"] == (await ok(client, "get_graph_stats", {}))["totalEntities"] > 0


async def test_a_call_folds_a_bounded_backlog_and_says_its_counts_are_behind(
    settings: Settings, graph: GraphBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a burst bigger than a call's bound (a bulk import, the keeper off or behind), each call folds its
    bound's worth and says its counts are behind, and the counts catch up call by call; never the whole backlog
    in one call."""
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS]))
    monkeypatch.setattr(stat_counts, "CHUNK", 10)
    monkeypatch.setattr(stat_counts, "CHUNKS_A_READ", 2)
    keeper_off = settings.model_copy(update={"stats_fold_seconds": 0})
    async with open_client(keeper_off, "in_process") as client:
        assert (await ok(client, "get_graph_stats", {}))["countsBehind"] is False  # the walk of an empty graph
        items = [{**_node(random.Random(i)), "label": "Person", "merge_keys": {"name": f"bulk {i}"}} for i in range(45)]
        await ok(client, "write_nodes", {"items": items})
        answers = [await ok(client, "get_graph_stats", {}) for _ in range(4)]
    counts = [(a["totalEntities"], a["countsBehind"]) for a in answers]
    assert counts == [(20, True), (40, True), (45, False), (45, False)]
    assert answers[-1] == await scanned_stats(graph)

"""`get_graph_stats` is exact (issue 35, item 3): after random sequences of tool calls through real MCP clients
(single and batch writes, relationships, deletes, archive and restore, merges, imports, from two agents and the
memory profile), its answer equals the one the full scan computes. The oracle below is the scan the statistics
were first computed by, kept here as written then: every node of every registered label, every relationship."""

import json
import random
from typing import Any

import pytest
from mcp import Client

from tests.conftest import MATRIX_SCHEMAS, every_toolset, ok, open_client
from write_gate.core import statistics as pure
from write_gate.core.cypher.statement import Statement
from write_gate.core.registry import ConflictPolicy
from write_gate.engines import GraphBackend
from write_gate.services.statistics import graph_stats
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
    "       min({v}.confidence) AS low, max({v}.confidence) AS high, sum({v}.confidence) AS total"
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


def _node(rng: random.Random) -> dict[str, Any]:
    return {
        "label": rng.choice(LABELS),
        "merge_keys": {"name": rng.choice(NAMES)},
        "properties": {"tags": [rng.choice(("old", "new"))]},
        "source": rng.choice(SOURCES),
        "extraction_method": rng.choice(METHODS),
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
        "endpoint_policy": rng.choice(("fail_if_missing", "merge_endpoints")),
    }


def _import(rng: random.Random) -> dict[str, Any]:
    names = rng.sample(NAMES, 3)
    lines = [{"type": "entity", "name": n, "entityType": rng.choice(LABELS), "observations": ["in"]} for n in names]
    lines.append({"type": "relation", "from": names[0], "to": names[1], "relationType": "KNOWS"})
    return {"format": "jsonl", "data": "\n".join(json.dumps(line) for line in lines)}


def _call(rng: random.Random, gates: list[Client], memory: Client) -> tuple[Client, str, dict[str, Any]]:
    gate = rng.choice(gates)
    kind = rng.choice(
        ("node", "node", "nodes", "link", "links", "delete", "unlink", "archive", "restore", "merge", "import")
    )
    if kind == "node":
        return gate, "write_node", _node(rng)
    if kind == "nodes":
        return gate, "write_nodes", {"items": [_node(rng) for _ in range(rng.randint(2, 5))]}
    if kind == "link":
        return gate, "write_relationship", _link(rng)
    if kind == "links":
        return gate, "write_relationships", {"items": [_link(rng) for _ in range(rng.randint(2, 4))]}
    if kind == "delete":
        return memory, "delete_entities", {"entityNames": rng.sample(NAMES, 2)}
    if kind == "unlink":
        a, b = rng.sample(NAMES, 2)
        return memory, "delete_relations", {"relations": [{"from": a, "to": b, "relationType": rng.choice(TYPES)}]}
    if kind == "archive":
        return gate, "archive_entities", {"tags": [rng.choice(("old", "new"))]}
    if kind == "restore":
        return gate, "restore_entities", {"entityNames": [rng.choice(NAMES)]}
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
    return memory, "import_graph", _import(rng)


@pytest.mark.parametrize("seed", [1, 2])
async def test_the_stats_equal_the_full_scan_after_random_tool_calls(
    settings: Settings, graph: GraphBackend, seed: int
) -> None:
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS]))
    # A node under two labels counts under each; one without confidence or times counts where it has values.
    await graph.write(Statement("CREATE (:Person:Organization {_key: 'twin', name: 'twin', written_by: 'raw'})"))
    rng = random.Random(seed)
    base = every_toolset(settings).model_copy(update={"conflict_policy": ConflictPolicy.KEEP_BOTH})
    async with (
        open_client(base.model_copy(update={"agent": "bot-a"}), "in_process") as bot_a,
        open_client(base.model_copy(update={"agent": "bot-b"}), "in_process") as bot_b,
        open_client(base.model_copy(update={"agent": "bot-m"}), "in_process", profile="memory") as memory,
    ):
        done: dict[str, int] = {}
        for step in range(48):
            client, tool, args = _call(rng, [bot_a, bot_b], memory)
            result = await client.call_tool(tool, args)  # a refusal (an absent entity, say): still compared
            done[tool] = done.get(tool, 0) + (not result.is_error)
            if step % 8 == 7:
                answer = await ok(bot_a, "get_graph_stats", {})
                assert answer == await scanned_stats(graph), (step, tool)
        answer = await ok(bot_a, "get_graph_stats", {})
    # The seeds reach every kind of change (each at least once).
    kinds = {"write_nodes", "write_relationships", "delete_entities", "archive_entities", "merge_entities"}
    kinds.add("import_graph")
    assert kinds <= {tool for tool, n in done.items() if n}
    assert answer["totalEntities"] > 0 and answer["totalRelations"] > 0
    assert answer["entityTypesCounts"]["Organization"] >= 1  # the twin, at least

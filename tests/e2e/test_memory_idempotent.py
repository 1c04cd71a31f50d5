"""The memory profile's writes that advertise `idempotentHint: true` keep it: repeating a call leaves the whole
graph as it was, every property included (provenance stamps such as last_updated and written_by, search text,
a relation's weight). A real engine per tier, a real MCP client session."""

import json
from collections.abc import AsyncIterator

import pytest
from mcp import Client

from tests.conftest import TESTS, open_client
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

# Every node and relationship the memory profile writes, all of their properties (the registry's own aside).
NODES = Statement(
    "MATCH (n) WHERE NOT n:Schema AND NOT n:WriteGateRegistry AND NOT n:WriteGateQuarantine "
    "RETURN labels(n) AS labels, properties(n) AS props"
)
RELATIONSHIPS = Statement(
    "MATCH (a)-[r]->(b) WHERE NOT a:Schema AND NOT a:WriteGateRegistry "
    "RETURN a._key AS a, type(r) AS type, b._key AS b, properties(r) AS props"
)
CALLS = [
    ("create_entities", {"entities": [{"name": " Ada ", "entityType": "person", "observations": ["math"]}]}),
    (
        "create_entities",
        {"entities": [{"name": "Acme", "entityType": "company"}, {"name": "Paris", "entityType": "city"}]},
    ),
    ("create_relations", {"relations": [{"from": " Ada ", "to": "Acme", "relationType": "works at"}]}),
    ("create_relations", {"relations": [{"from": " Ada ", "to": "Paris", "relationType": "likes"}]}),
    ("add_observations", {"observations": [{"entityName": " Ada ", "contents": ["engines", "math", "engines"]}]}),
    ("add_observations", {"observations": [{"entityName": "Acme", "contents": ["founded 1900"]}]}),
]


@pytest.fixture
async def memory(settings: Settings, graph: GraphBackend) -> AsyncIterator[Client]:
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "memory"]))
    async with open_client(settings, "in_process", profile="memory") as client:
        yield client


async def snapshot(graph: GraphBackend) -> list[str]:
    nodes = await graph.read(NODES)
    relationships = await graph.read(RELATIONSHIPS)
    assert nodes, "the calls wrote nothing to compare"
    return sorted(json.dumps(row, sort_keys=True, default=str) for row in [*nodes, *relationships])


async def test_the_idempotent_writes_change_nothing_when_repeated(memory: Client, graph: GraphBackend) -> None:
    hints = {tool.name: tool.annotations.idempotent_hint for tool in (await memory.list_tools()).tools}
    assert {tool for tool, _ in CALLS} <= {name for name, hint in hints.items() if hint}
    for tool, args in CALLS:
        first = await memory.call_tool(tool, args)
        assert not first.is_error, first.structured_content
        before = await snapshot(graph)
        for _ in range(2):
            again = await memory.call_tool(tool, args)
            assert not again.is_error, again.structured_content
            assert await snapshot(graph) == before, f"repeating {tool} changed the graph"
    # The repeats wrote nothing new, and the first calls did write what the snapshot holds.
    rows = await graph.read(Statement("MATCH (n {name: ' Ada '}) RETURN n.observations AS o, n.last_updated AS t"))
    assert rows == [{"o": ["math", "engines"], "t": rows[0]["t"]}] and rows[0]["t"]
    weights = await graph.read(Statement("MATCH ()-[r]->() WHERE r.weight IS NOT NULL RETURN r.weight AS w"))
    assert [row["w"] for row in weights] == [1.0, 1.0]

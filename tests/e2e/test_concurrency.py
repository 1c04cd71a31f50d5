"""Concurrent sessions with overlapping merge keys on every engine (Memgraph: its unique constraints and
the retried lost race; FalkorDB: its serialised writes): one node per key, every acknowledged write kept."""

import anyio
import pytest

from tests.conftest import open_client
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]


async def test_16_sessions_overlapping_keys(settings: Settings, matrix_graph: GraphBackend) -> None:
    last: dict[tuple[str, int], int] = {}

    async def agent(n: int) -> None:
        async with open_client(settings, "in_process") as client:
            for i in range(40):  # 640 writes on 20 keys: 32 a key, from every session
                key = f"k{(i * 7 + n) % 20}"
                args = {
                    "label": "Person",
                    "merge_keys": {"name": key},
                    "properties": {f"a{n}": i},
                    "source": "race",
                    "extraction_method": "api",
                }
                result = await client.call_tool("write_node", args)
                assert not result.is_error, result.structured_content
                last[(key, n)] = i

    with anyio.fail_after(600):
        async with anyio.create_task_group() as tasks:
            for n in range(16):
                tasks.start_soon(agent, n)
    rows = await matrix_graph.read(Statement("MATCH (n:Person) RETURN n.name AS name, properties(n) AS p"))
    assert sorted(r["name"] for r in rows) == sorted(f"k{i}" for i in range(20))
    props = {r["name"]: r["p"] for r in rows}
    assert all(props[key][f"a{n}"] == i for (key, n), i in last.items())

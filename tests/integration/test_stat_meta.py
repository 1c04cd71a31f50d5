"""The statistics' one `_StatMeta` node (where the first walk and the agent tallies' folds are) stays one: found by
its key, unique (migration 0017). By its label alone, gates folding for the first time at once made two (CI, the
Bolt tier: the tallies' read then met two rows), and a graph that holds two is counted afresh."""

import anyio
import pytest

from write_gate.core.cypher import agent_tallies as tally_cypher
from write_gate.core.cypher import stat_counts as stat_cypher
from write_gate.core.cypher.statement import Statement
from write_gate.core.stat_counts import META_KEY
from write_gate.engines import GraphBackend
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import Settings
from write_gate.store.migrations import key_statistics_meta, migrate

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

FIRST = {"seq": "", "change_id": "", "at": "", "conflict_id": ""}  # the cursors of a graph never folded


async def metas(graph: GraphBackend) -> list[dict]:
    return await graph.read(Statement("MATCH (m:_StatMeta) RETURN m.k AS k, m.tally_seq AS seq"))


@pytest.mark.parametrize("attempt", range(3))
async def test_first_folds_at_once_make_one_meta_node(graph: GraphBackend, settings: Settings, attempt: int) -> None:
    """Gates' first folds at once (a connection each) on a migrated graph with no statistics yet: one node. Without
    the key's index, FalkorDB made two or more in about four tries of ten (its MERGE does not see a node of a label
    the graph did not have when the statement began)."""
    await migrate(graph)
    assert await metas(graph) == []
    moved = {"seq": "s", "change_id": "c", "at": "", "conflict_id": ""}
    params = {"read_from": FIRST, "moved_to": moved, "tallies": []}
    gates = [await open_backend(settings) for _ in range(4)]
    go = anyio.Event()
    try:
        for gate in gates:
            await gate.read(Statement("RETURN 1 AS one"))  # connected before they start together

        async def fold(gate: GraphBackend) -> None:
            await go.wait()
            for _ in range(3):
                await gate.write(Statement(tally_cypher.APPLY.text, params))
                await gate.write(Statement(stat_cypher.WALKED.text, {"cursor": None, "ready": True}))

        async with anyio.create_task_group() as tasks:
            for gate in gates:
                tasks.start_soon(fold, gate)
            await anyio.sleep(0.05)
            go.set()
    finally:
        for gate in gates:
            await gate.close()
    assert await metas(graph) == [{"k": META_KEY, "seq": "s"}]


async def test_a_graph_with_two_meta_nodes_is_counted_afresh(graph: GraphBackend) -> None:
    """Two `_StatMeta` nodes (made before the key) cannot be told apart: every statistics node goes, and the next
    fold walks the graph again; a single one is only given its key."""
    await graph.write(Statement("CREATE (:_StatMeta {tally_seq: 'a'}), (:_StatMeta {tally_seq: 'b'})"))
    await graph.write(Statement("CREATE (:_StatCount {k: 'x', n: 3}), (:_AgentTally {agent: 'a', writes: 2})"))
    await key_statistics_meta(graph)
    counted = "MATCH (s) WHERE s:_StatMeta OR s:_StatCount OR s:_AgentTally RETURN count(s) AS n"
    assert await graph.read(Statement(counted)) == [{"n": 0}]
    await graph.write(Statement("CREATE (:_StatMeta {tally_seq: 'c'}), (:_AgentTally {agent: 'a', writes: 2})"))
    await key_statistics_meta(graph)
    assert await metas(graph) == [{"k": META_KEY, "seq": "c"}]
    assert await graph.read(Statement(counted)) == [{"n": 2}]

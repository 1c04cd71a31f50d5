"""Every statement shape the gate can send (the golden files of the engine's dialect, tests/golden/<dialect>) runs on
every engine tier: FalkorDB's on embedded and external FalkorDB, Memgraph's through the Bolt tier (and on Memgraph
where Docker is). Reads run read-only at the engine; on FalkorDB every other shape is refused read-only, so the
list of reads is exact. What each shape does to a graph is the behaviour tests' business; this proves each parses
and runs."""

import re

import anyio
import pytest

from tests.conftest import is_bolt_tier
from tests.unit.test_golden import FRAGMENTS, READS, RUN_TIME_PARAMETERS, built, shapes
from write_gate.core.cypher import embeddings
from write_gate.core.cypher.statement import Statement
from write_gate.engines import BackendError, GraphBackend
from write_gate.serving.config import Settings

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

ALL_SHAPES = sorted((set(shapes("falkordb")) | set(shapes("memgraph"))) - FRAGMENTS)


def runnable(dialect: str, name: str) -> Statement:
    statement = built(dialect, name)
    params = dict(statement.params)
    for missing in set(re.findall(r"\$(\w+)", statement.text)) - set(params):
        params[missing] = RUN_TIME_PARAMETERS[missing]
    return Statement(statement.text, params)


@pytest.mark.parametrize("name", ALL_SHAPES)
async def test_every_statement_shape_runs_on_this_engine(graph: GraphBackend, settings: Settings, name: str) -> None:
    dialect = graph.dialect.name
    if name not in shapes(dialect):
        pytest.skip(f"{dialect} never sends {name}")
    statement = runnable(dialect, name)
    await graph.write(Statement("CREATE (:Existing)"))  # FalkorDB: a read of a graph not made yet finds nothing
    if name == "drop_index":
        await graph.ensure_index("Person", "name")  # what the backfill drops exists on an old graph
    if name.startswith(("read_text_search_indexed", "read_page_substring")):
        for label in ("Person", "Organization"):  # the indexes it queries (migrations 0007 and 0014, schema loads)
            assert await graph.ensure_text_index(label)
    if name == "embedding_nearest_texts":
        await graph.write(runnable(dialect, "embedding_index_0"))  # the vector index it queries, which FalkorDB
        if (state := embeddings.vector_index_state(graph.dialect)) is not None:  # builds in the background
            with anyio.fail_after(30):
                while embeddings.vector_index_building(await graph.read(state)):
                    await anyio.sleep(0.01)
    if name in READS:
        await graph.read(statement)
        return
    if dialect == "falkordb":
        with pytest.raises(BackendError):  # not a read: FalkorDB's GRAPH.RO_QUERY refuses it
            await graph.read(statement)
    elif is_bolt_tier(settings) and not name.startswith(("create_", "embedding_index_")):
        with pytest.raises(BackendError, match="a read ran a statement of type"):  # the summary type check
            await graph.read(statement)
    await graph.write(statement)

"""Every read statement runs under a time limit the engine enforces (WRITE_GATE_READ_TIMEOUT_SECONDS: FalkorDB's
per-query TIMEOUT, Memgraph's transaction timeout, which the Bolt double honours as Memgraph does): a read past it
is refused with QUERY_TIMEOUT, never answered empty, and the next call is served. Runs on every engine tier."""

import anyio
import pytest

from tests.conftest import MATRIX_SCHEMAS, is_bolt_tier, ok, open_client, rejected
from write_gate.core.cypher.statement import Statement
from write_gate.core.identity import SEARCH_FIELD
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

# Enough nodes that a search scanning them all takes 150 ms or more on any tier, three times the limit below and
# more, while the gate's other reads (the registry's, one node's neighbours) take a few milliseconds at most.
NODES = 150_000
LIMIT_SECONDS = 0.01
# On the Bolt tier the double's own Python counts in the limit (it times the transaction as Memgraph does): a
# session's registry read took past 10 ms there under load, so the gate started without its registry. There the
# limit is 50 ms, over enough nodes that the scan takes three times that on a quiet machine.
BOLT_LIMIT_SECONDS = 0.05
BOLT_NODES = 500_000


async def test_a_read_past_the_limit_is_refused_and_the_next_call_is_served(
    settings: Settings, graph: GraphBackend
) -> None:
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS]))
    grow = f"UNWIND range(1, $n) AS i CREATE (:Person {{{SEARCH_FIELD}: 'person ' + toString(i)}})"
    await graph.write(Statement(grow, {"n": BOLT_NODES if is_bolt_tier(settings) else NODES}))
    try:
        async with open_client(settings, "in_process") as client:
            quarry = {"label": "Organization", "merge_keys": {"name": "Quarry"}}
            await ok(client, "write_node", {**quarry, "source": "test", "extraction_method": "manual"})
        limit = BOLT_LIMIT_SECONDS if is_bolt_tier(settings) else LIMIT_SECONDS
        limited = settings.model_copy(update={"read_timeout_seconds": limit})
        async with open_client(limited, "in_process") as client:
            # A query shorter than a trigram is a scan of every Person's search text; "q" is in none of them. The
            # gate's own first read, its registry, is held to the same tiny limit: on a loaded machine (the Bolt
            # double's Python counts in it) it may time out too, and the gate reads it again at its next poll.
            with anyio.fail_after(30):
                while (refusal := await rejected(client, "search_nodes", {"query": "q"}))["error_code"] == (
                    "SCHEMA_SOURCE_UNAVAILABLE"
                ):
                    await anyio.sleep(0.1)
            assert refusal["error_code"] == "QUERY_TIMEOUT", refusal
            assert refusal["details"]["limit_seconds"] == limit
            assert "narrow" in refusal["details"]["hint"]
            # The session serves on. (Not asked of a call that reads the engine: under this limit, a read right after
            # a timed-out one may itself be stopped, and on the Bolt tier the double's own Python counts in the limit.)
            assert "search_nodes" in {tool.name for tool in (await client.list_tools()).tools}
        # So does the engine: the same search within the suite's limit answers, and finds what the graph holds.
        # (A read just past a timed-out one may itself take FalkorDB tens of milliseconds, so it is not asked to
        # fit the tiny limit.)
        async with open_client(settings, "in_process") as client:
            found = await ok(client, "search_nodes", {"query": "q"})
            assert [entity["name"] for entity in found["entities"]] == ["Quarry"]
    finally:
        await graph.write(Statement("MATCH (n:Person) DELETE n"))  # the engine serves the whole session

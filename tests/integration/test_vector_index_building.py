"""FalkorDB builds its vector index in the background, after its creation (and at a start that loads it), and
until it is done refuses a k-NN query ("Invalid arguments for procedure 'db.idx.vector.queryNodes'"); measured
here, 6,000 vectors of 256 floats take about a second, 25,000 about twelve. Meanwhile it holds another index DDL on
the label until the build is done, so a gate's own first search waits in its CREATE; a gate that made the index
before (another gate made it, or it was made before the engine started again) meets the refusal. A semantic search
that meets it waits for the build, then answers BACKEND_UNAVAILABLE with the engine's progress (services/embeddings.py,
`Embeddings.nearest`), never an engine failure. Memgraph builds its index in the CREATE itself: FalkorDB only."""

import logging

import anyio
import pytest

from write_gate.core.cypher import embeddings as cypher
from write_gate.core.cypher.dialect import FalkorDBDialect, MemgraphDialect
from write_gate.core.cypher.statement import Statement
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.engines import GraphBackend
from write_gate.services import embeddings as embeddings_service
from write_gate.services.embeddings import Embeddings
from write_gate.serving.embedders import WordLlamaProvider

pytestmark = pytest.mark.anyio

VECTORS = 6_000


async def vectors_then_their_index(graph: GraphBackend) -> list[float]:
    """`VECTORS` vectors, one of them the query's own, and then the vector index over them, as another gate makes
    it: the engine starts building it. The query's vector."""
    provider = WordLlamaProvider()
    [query] = provider.embed(["who builds rockets?"])
    await graph.write(
        Statement(
            "CREATE (:_Embedding {label: 'Person', key: 'rocketeer', field: 'name', vector: vecf32($query)}) "
            "WITH 1 AS one UNWIND range(1, $count) AS i CREATE (:_Embedding {label: 'Filler', key: toString(i), "
            "field: 'name', vector: vecf32([x IN range(1, 256) | rand() - 0.5])})",
            {"query": query, "count": VECTORS - 1},
        )
    )
    vector_index, _key_index = cypher.vector_indexes(graph.dialect, provider.dimension)
    await graph.write(vector_index)
    return query


async def building(graph: GraphBackend) -> str | None:
    return cypher.vector_index_building(await graph.read(cypher.VECTOR_INDEX_STATE))


def made_before(embeddings: Embeddings) -> Embeddings:
    """As a gate that made the index already (before the engine started again, or another gate made it): it sends
    no DDL, which FalkorDB would hold until the build is done."""
    embeddings._indexed = True  # noqa: SLF001
    return embeddings


async def test_a_search_waits_for_the_index_the_engine_is_building(
    graph: GraphBackend, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The wait itself is what is tested, not its length: on a loaded machine the build outlasted the 5 s a
    # search waits (a CI run beside other work), which the next test covers.
    monkeypatch.setattr(embeddings_service, "INDEX_WAIT_SECONDS", 120.0)
    query = await vectors_then_their_index(graph)
    assert await building(graph)  # a k-NN query now is refused:
    with pytest.raises(Exception, match="Invalid arguments for procedure"):
        await graph.read(Statement(cypher.nearest_texts(graph.dialect).text, {"k": 1, "vector": query}))
    with caplog.at_level(logging.INFO, logger=embeddings_service.__name__):
        nearest = await made_before(Embeddings(WordLlamaProvider(), graph)).nearest(1, query)
    assert [(row["label"], row["key"]) for row in nearest] == [("Person", "rocketeer")]
    assert "waits for the vector index: [Indexing]" in caplog.text


async def test_a_build_longer_than_the_wait_is_answered_as_one(
    graph: GraphBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embeddings_service, "INDEX_WAIT_SECONDS", 0.0)
    query = await vectors_then_their_index(graph)
    with pytest.raises(GateRejection) as refused:
        await made_before(Embeddings(WordLlamaProvider(), graph)).nearest(1, query)
    assert refused.value.rejected.error_code == ErrorCode.BACKEND_UNAVAILABLE
    assert refused.value.rejected.details["reason"] == "index_building"
    assert "UNDER CONSTRUCTION" in refused.value.rejected.details["progress"]
    assert "mode 'fulltext'" in refused.value.rejected.message


async def test_a_missing_index_is_still_an_engine_failure(graph: GraphBackend) -> None:
    """No vector index at all is no build to wait for: the engine's refusal is reported as the failure it is."""
    await graph.write(Statement("CREATE (:_Embedding {label: 'Person', key: 'k', field: 'name'})"))
    with pytest.raises(GateRejection) as refused:
        await made_before(Embeddings(WordLlamaProvider(), graph)).nearest(1, [0.0] * 255 + [1.0])
    assert refused.value.rejected.error_code == ErrorCode.INTERNAL_ERROR


def test_the_state_of_a_label_with_other_indexes_is_read_from_its_vector_field() -> None:
    rows = [
        {"types": {"key": ["RANGE"], "vector": ["VECTOR"]}, "status": "[Indexing] 10/20: UNDER CONSTRUCTION"},
        {"types": {"key": ["RANGE"]}, "status": "OPERATIONAL"},
    ]
    assert cypher.vector_index_building(rows) == "[Indexing] 10/20: UNDER CONSTRUCTION"
    assert cypher.vector_index_building(rows[1:]) is None
    assert cypher.vector_index_building([]) is None
    assert cypher.vector_index_state(FalkorDBDialect()) is cypher.VECTOR_INDEX_STATE
    assert cypher.vector_index_state(MemgraphDialect()) is None


async def test_a_refusal_met_as_the_build_ends_is_asked_again(
    graph: GraphBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CI once met the engine's refusal just before the build ended, and the look at the index after it found
    no build any more: the search answered an engine failure. Here the second look waits until the build is done
    (the engine's own state, read as the search reads it), so the search meets that order every time."""
    query = await vectors_then_their_index(graph)
    embeddings = made_before(Embeddings(WordLlamaProvider(), graph))
    look = embeddings._index_building  # noqa: SLF001
    looks: list[str | None] = []

    async def look_once_the_build_is_over() -> str | None:
        while looks and await building(graph):
            await anyio.sleep(0.02)
        looks.append(await look())
        return looks[-1]

    monkeypatch.setattr(embeddings, "_index_building", look_once_the_build_is_over)
    nearest = await embeddings.nearest(1, query)
    assert [(row["label"], row["key"]) for row in nearest] == [("Person", "rocketeer")]
    assert looks[0] is not None and looks[-1] is None  # it saw the build, then met the refusal as it ended

"""Search measured, not asserted (issue 38, item 5): the evaluation set (tests/eval) loaded once through a real MCP
session on a gate with embeddings on, each question put to substring, ranked full-text, semantic and hybrid
search, recall@5 and MRR printed for the whole set and its no-shared-word half, and the targets held: hybrid
recall@5 at least 0.85 on the whole set and 0.75 on the half, where substring search finds at most 0.3.

Embedded engine only: the scores are the gate's ranking, not an engine's. Semantic and hybrid search are skipped
only while search_nodes_ranked's input schema (from tools/list) has no `mode`."""

import uuid

import anyio
import pytest

from tests.conftest import open_client
from tests.eval.runner import FULLTEXT, HYBRID, SEMANTIC, SUBSTRING_WORD, Evaluation, evaluate
from tests.eval.scoring import load_set
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import Settings
from write_gate.store.migrations import migrate

NO_MODE = "search_nodes_ranked has no mode yet"


async def run(settings: Settings) -> Evaluation:
    backend = await open_backend(settings)
    try:
        await migrate(backend)  # the core registry: Person, Organization, Project, Document, Event, Entity
    finally:
        await backend.close()
    async with open_client(settings, "in_process") as client:
        return await evaluate(client, load_set(), at_once=8)  # ranks, not times, are what it checks


@pytest.fixture(scope="module")
def evaluation(engine: Settings) -> Evaluation:
    """The whole run, once for the module: its own graph, the `search` toolset, embeddings on (local)."""
    update = {"graph_name": f"t_eval_{uuid.uuid4().hex[:8]}", "toolsets": "search", "embeddings": "local"}
    return anyio.run(run, engine.model_copy(update=update))


def test_the_table(evaluation: Evaluation, capsys: pytest.CaptureFixture[str]) -> None:
    """Every search the gate offers is scored on every question; the table is printed (with -s, or here)."""
    text = evaluation.table()
    with capsys.disabled():
        print(f"\nsearch evaluation ({SUBSTRING_WORD}: the word ranking the answer best, an upper bound)\n{text}")
    questions = len(evaluation.search_set.questions)
    assert all(len(ranks) == questions for ranks in evaluation.ranks.values())
    assert FULLTEXT in evaluation.ranks and (SEMANTIC in evaluation.ranks) is evaluation.has_modes


def test_substring_search_finds_little_of_the_no_shared_word_half(evaluation: Evaluation) -> None:
    """The half is one a word match cannot find: substring search by the question's best word finds at most 0.3."""
    assert evaluation.score(SUBSTRING_WORD).recall_half <= 0.3, evaluation.table()


# Measured on 2026-11-29 with the shipped 256-dimension wordllama model: hybrid 0.738 and 0.495 (semantic alone 0.826
# and 0.670). Strict: the day a model or a fusion meets the targets, this test fails until the mark is taken off.
@pytest.mark.xfail(strict=True, reason="issue 38's hybrid targets are missed with the local model (BENCHMARKS.md)")
def test_hybrid_search_meets_its_targets(evaluation: Evaluation) -> None:
    if not evaluation.has_modes:
        pytest.skip(NO_MODE)
    hybrid = evaluation.score(HYBRID)
    assert hybrid.recall_all >= 0.85 and hybrid.recall_half >= 0.75, evaluation.table()


def test_semantic_search_is_scored(evaluation: Evaluation) -> None:
    """Semantic search alone has no target; its row shows what the fusion adds to it."""
    if not evaluation.has_modes:
        pytest.skip(NO_MODE)
    assert len(evaluation.ranks[SEMANTIC]) == len(evaluation.search_set.questions)


def test_search_by_meaning_finds_what_no_word_match_can(evaluation: Evaluation) -> None:
    """What the modes are for, held below what they measure (0.670 and 0.495 on the half), so a change that loses
    the meaning (a text not embedded, a vector lost, a fusion that drops the semantic ranking) fails here."""
    if not evaluation.has_modes:
        pytest.skip(NO_MODE)
    word = evaluation.score(SUBSTRING_WORD).recall_half
    semantic, hybrid = evaluation.score(SEMANTIC), evaluation.score(HYBRID)
    assert semantic.recall_half >= 0.6 > word and hybrid.recall_half >= 0.45 > word, evaluation.table()
    assert semantic.recall_all >= 0.75 and hybrid.recall_all >= 0.65, evaluation.table()

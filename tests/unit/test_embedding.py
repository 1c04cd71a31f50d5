"""The embedding provider contract and its pure parts (issue 38): which texts are embedded, their hashes, rank
fusion, and wordllama's shipped model loaded offline, once, only when embeddings are on."""

import math
import subprocess
import sys

from write_gate.core.embedding import EmbeddingProvider, fused, question_query, text_hash, texts_of
from write_gate.serving.config import Settings
from write_gate.serving.embedders import WordLlamaProvider, load_embedder


def test_a_write_embeds_each_text_of_the_fields_it_carries() -> None:
    carried, texts = texts_of(("name", "observations"), {"name": "Ada", "observations": ["a", "b", "a", ""], "x": "y"})
    assert carried == ["name", "observations"]
    assert [(t.field, t.text) for t in texts] == [("name", "Ada"), ("observations", "a"), ("observations", "b")]
    assert texts[0].hash == text_hash("name", "Ada") != text_hash("observations", "Ada")
    assert texts_of(("name", "summary"), {"owner": "NASA"}) == ([], [])


def test_reciprocal_rank_fusion_adds_one_over_k_plus_rank() -> None:
    scores = fused([[1, 2, 3], [3, 1]])
    assert scores == {1: 1 / 61 + 1 / 62, 2: 1 / 62, 3: 1 / 63 + 1 / 61}


def test_the_local_provider_embeds_offline_in_256_unit_dimensions() -> None:
    provider = load_embedder(Settings(embeddings="local"))
    assert isinstance(provider, WordLlamaProvider) and isinstance(provider, EmbeddingProvider)
    rocket, engineer, bread = provider.embed(["rocket launch", "aerospace engineer", "sourdough bread"])
    assert len(rocket) == provider.dimension == 256
    assert math.isclose(sum(x * x for x in rocket), 1.0, rel_tol=1e-4)

    def cos(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert cos(rocket, engineer) > cos(rocket, bread)


def test_a_gate_without_embeddings_loads_no_model() -> None:
    code = (
        "import sys\n"
        "from write_gate.serving.assembly import build_gate\n"
        "from write_gate.serving.embedders import load_embedder\n"
        "from write_gate.serving.config import Settings\n"
        "assert load_embedder(Settings()) is None\n"
        "assert 'wordllama' not in sys.modules and 'numpy' not in sys.modules, sorted(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_loading_the_local_model_leaves_the_process_logging_as_it_was() -> None:
    """wordllama sets logging up (INFO, to stderr) when imported: in a process that had not, the gate's own INFO
    lines would then reach stderr on every write. The loading keeps the root logger as it found it."""
    code = (
        "import logging\n"
        "from write_gate.serving.embedders import WordLlamaProvider\n"
        "assert WordLlamaProvider().embed(['a rocket'])\n"
        "root = logging.getLogger()\n"
        "assert root.handlers == [] and root.level == logging.WARNING, (root.handlers, root.level)\n"
        "logging.getLogger('write_gate.decisions').info('write_node written')\n"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "write_node written" not in ran.stderr, ran.stderr


def test_a_question_s_full_text_part_is_any_of_its_content_words() -> None:
    assert question_query("Who works on rockets, and where?") == "works OR rockets"
    assert question_query("who is it?") is None  # nothing but function words: the semantic ranking alone
    assert question_query("NOT OR AND") is None  # the query language's operators are not words here

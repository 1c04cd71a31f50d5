"""The search evaluation set's properties (issue 38, item 5) and its scorer's pure functions: the set is as large as
the issue asks, every answer is one fact, at least half the questions share no word with their answer, and the
scores are computed as their definitions say."""

import json
from pathlib import Path

import pytest

from tests.eval.scoring import (
    SET_FILE,
    best_rank,
    fulltext_query,
    fuse,
    load_set,
    mrr,
    rank,
    recall_at,
    same_word,
    score,
    shared_words,
    table,
    words,
)

CORE_LABELS = {entry["name"] for entry in json.loads(Path("schemas/core/nodes.json").read_text())["entries"]}
SET = load_set()


def test_the_set_is_as_large_as_asked_and_small_on_disk() -> None:
    assert len(SET.facts) >= 300 and len(SET.questions) >= 200
    assert SET_FILE.stat().st_size < 150_000


def test_every_fact_is_a_core_entity_with_a_name_and_one_to_three_observations() -> None:
    assert {fact.label for fact in SET.facts} == CORE_LABELS  # every label used, none outside the registry
    for fact in SET.facts:
        assert fact.name.strip() and 1 <= len(fact.observations) <= 3, fact
        assert all(observation.strip() for observation in fact.observations), fact
    names = [fact.name for fact in SET.facts]
    assert len(names) == len(set(names))


def test_every_answer_is_exactly_one_fact_and_no_question_repeats() -> None:
    names = [fact.name for fact in SET.facts]
    for question in SET.questions:
        assert names.count(question.answer) == 1, question
    asked = [question.question.lower() for question in SET.questions]
    assert len(asked) == len(set(asked))


def test_at_least_half_the_questions_share_no_word_with_their_answer() -> None:
    half = SET.no_shared_word()
    assert 2 * len(half) >= len(SET.questions), f"{len(half)} of {len(SET.questions)}"
    for question in half:  # no word of the question is any word of the answer's name and observations
        theirs = words(SET.fact(question.answer).text)
        assert not [(a, b) for a in words(question.question) for b in theirs if same_word(a, b)], question


def test_distractors_share_words_with_questions_they_do_not_answer() -> None:
    """A quarter of the questions at least have another fact sharing a word with them: a search matching words
    meets a wrong entity, not only the right one or nothing."""
    misleading = [
        q
        for q in SET.questions
        if any(fact.name != q.answer and shared_words(q.question, fact.text) for fact in SET.facts)
    ]
    assert 4 * len(misleading) >= len(SET.questions)


def test_words_drop_case_stop_words_single_letters_and_repeats() -> None:
    assert words("Who works on Rockets? Rockets, a T. rex!") == ["works", "rockets", "rex"]
    assert words("Cafés in Nazaré") == ["cafés", "nazaré"]


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("rocket", "rockets", True),
        ("studies", "studying", True),
        ("carves", "carving", True),
        ("art", "artist", True),
        ("hear", "hearing", True),
        ("rockets", "aerospace", False),
        ("trackers", "tracking", True),
        ("distant", "discovered", False),
        ("sang", "sing", False),
        ("plant", "houseplants", False),  # a word inside another is not the same word
    ],
)
def test_same_word_counts_inflections(a: str, b: str, same: bool) -> None:
    assert same_word(a, b) is same and same_word(b, a) is same


def test_shared_words_finds_the_question_words_the_text_has() -> None:
    assert shared_words("who works on rockets?", "Mara. aerospace engineer") == []
    assert shared_words("which rocket bakery opens early?", "Rocket Street Bakery. opens at five") == [
        "rocket",
        "bakery",
        "opens",
    ]


def test_the_fulltext_query_joins_the_question_words_by_or() -> None:
    assert fulltext_query("Who works on rockets?") == "works OR rockets"
    assert fulltext_query("who is it?") == ""


def test_rank_and_best_rank() -> None:
    assert rank("b", ["a", "b", "c"]) == 2 and rank("z", ["a"]) is None
    assert best_rank([None, 3, 2]) == 2 and best_rank([None, None]) is None and best_rank([]) is None


def test_recall_at_and_mrr_follow_their_definitions() -> None:
    ranks = [1, 2, 5, 6, None, 10, 11]
    assert recall_at(ranks, 5) == pytest.approx(3 / 7)
    assert mrr(ranks, 10) == pytest.approx((1 + 1 / 2 + 1 / 5 + 1 / 6 + 1 / 10) / 7)
    assert recall_at([]) == 0.0 and mrr([]) == 0.0


def test_score_splits_the_whole_set_and_the_half() -> None:
    scored = score("s", [1, None, 2, 7], [True, True, False, False])
    assert (scored.recall_all, scored.recall_half) == (pytest.approx(0.5), pytest.approx(0.5))
    assert scored.mrr_all == pytest.approx((1 + 1 / 2 + 1 / 7) / 4) and scored.mrr_half == pytest.approx(0.5)


def test_reciprocal_rank_fusion_rewards_agreement() -> None:
    assert fuse([["a", "b", "c"], ["b", "c", "a"]]) == ["b", "a", "c"]
    assert fuse([["x"], []]) == ["x"]


def test_the_table_names_each_search_and_its_four_scores() -> None:
    text = table([score("fulltext", [1, None], [True, False])], questions=2, half=1)
    assert text.splitlines()[0] == "2 questions; half: the 1 sharing no word with their answer"
    assert text.splitlines()[2].split() == ["fulltext", "0.500", "0.500", "1.000", "1.000"]

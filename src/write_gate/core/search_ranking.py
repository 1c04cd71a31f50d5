"""How the ranked search orders its matches: seed 004's TF-IDF (each counted term's occurrences times the log of
how rare it is among the candidates), computed with the judging, each term counted once per candidate."""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from write_gate.core.search_query import Document, Node, Term, count, evaluate, leaves


@dataclass(frozen=True)
class Judged:
    matches: bool
    score: float


def judge_and_score(tree: Node, docs: Sequence[Document]) -> list[Judged]:
    """For each document: whether the query matches it, and its score: for every term that counts for a match,
    its occurrences times log(1 + N / the documents holding it), N being all of `docs`, matches or not."""
    terms = list(dict.fromkeys(term for term, _positive in leaves(tree)))
    counted = [i for i, term in enumerate(terms) if any(t == term and p for t, p in leaves(tree))]
    counts = [[count(term, doc) for term in terms] for doc in docs]
    holding = {i: sum(1 for row in counts if row[i]) for i in counted}
    weights = {i: math.log(1 + len(docs) / df) for i, df in holding.items() if df}
    index = {term: i for i, term in enumerate(terms)}
    out = []
    for row in counts:
        holds = _holds(index, row)
        out.append(Judged(evaluate(tree, holds), sum(row[i] * w for i, w in weights.items())))
    return out


def _holds(index: dict[Term, int], row: list[int]) -> Callable[[Term], bool]:
    """A closure over one row: whether each term occurs in it."""
    return lambda term: row[index[term]] > 0


def tf_idf(tree: Node, docs: Sequence[Document]) -> list[float]:
    return [judged.score for judged in judge_and_score(tree, docs)]

"""memory-mcp's fuzzy match (seed 004, "Fuzzy Search Flow"): an entity matches when one of its fields (name, type,
each observation) is at least `threshold` similar to the whole query, similarity being 1 - Levenshtein distance /
the longer length, compared folded (as every search here folds). Pure.

Where the candidates come from is the ranked search's index (`candidate_query`): the entities holding a word
within the typo tolerance of one of the query's words (search engines' AUTO: 1 edit from 3 letters, 2 from 6).
A field as similar as the threshold asks shares such a word in practice; one that is similar only once words are
joined or split ("adalovelace") is not a candidate, the one bound this keeps so that a call's cost is its
candidates', not the graph's.
"""

from collections.abc import Iterable

from rapidfuzz.distance import Levenshtein

from write_gate.core.identity import fold
from write_gate.core.search_query import MAX_TERMS, WORD


def similarity(query: str, text: str) -> float:
    """1 - distance / the longer length, folded; two empty texts are alike."""
    return Levenshtein.normalized_similarity(fold(query), fold(text))


def close_enough(query: str, fields: Iterable[str], threshold: float) -> bool:
    return any(similarity(query, field) >= threshold for field in fields)


def candidate_query(query: str) -> str | None:
    """The ranked search's query that finds the candidates: any of the query's words (its first MAX_TERMS), each
    with its typo tolerance (asked with `fuzzy`), and a word of two letters, which has none, as a prefix (`jo` is
    0.67 similar to "Joe", which a tolerance of none would not find); None for a query without a word. Folded
    words are never operators, which the ranked language writes in capitals."""
    words = list(dict.fromkeys(WORD.findall(fold(query))))[:MAX_TERMS]
    return " OR ".join(f"{word}*" if len(word) == 2 else word for word in words) if words else None

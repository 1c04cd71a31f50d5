"""memory-mcp's entity similarity (seed 004, "Find Duplicates Flow"), which the memory profile's find_duplicates
scores with, so an agent written for memory-mcp gets the groups it would get there:

    score = name x 0.4 + type x 0.3 + observations x 0.2 + tags x 0.1

name: 1 - Levenshtein distance / the longer name's length, both lower-cased; type: 1 for the same type, else 0;
observations and tags: Jaccard (shared / all). Two empty sets share nothing: they score 0, so entities alike
only in their name and type score at most 0.7, under the default threshold of 0.8.
"""

from collections.abc import Set

from rapidfuzz.distance import Levenshtein

WEIGHTS = {"name_similarity": 0.4, "same_type": 0.3, "shared_observations": 0.2, "shared_tags": 0.1}


def name_similarity(a: str, b: str) -> float:
    """1 - edit distance / the longer length, lower-cased ("John Smith" / "Jon Smith": 0.9)."""
    return Levenshtein.normalized_similarity(a.lower(), b.lower())


def jaccard(a: Set[str], b: Set[str]) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def similarity(
    names: tuple[str, str],
    same_type: bool,
    observations: tuple[Set[str], Set[str]],
    tags: tuple[Set[str], Set[str]],
) -> tuple[float, dict[str, float]]:
    """The weighted score (rounded to 4 decimals) and each part's figure before weighting."""
    parts = {
        "name_similarity": name_similarity(*names),
        "same_type": 1.0 if same_type else 0.0,
        "shared_observations": jaccard(*observations),
        "shared_tags": jaccard(*tags),
    }
    score = sum(WEIGHTS[part] * figure for part, figure in parts.items())
    return round(score, 4), {part: round(figure, 4) for part, figure in parts.items()}

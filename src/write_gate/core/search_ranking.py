"""How the ranked search orders what it found where no engine index scored it: TF-IDF over the scanned nodes,
as seed 004's ranked search (each counted term's occurrences times the log of how rare it is)."""

import math
from collections.abc import Sequence

from write_gate.core.search_query import Document, Node, leaves, occurrences


def tf_idf(tree: Node, docs: Sequence[Document]) -> list[float]:
    """Each document's score: for every term that counts for a match, its occurrences in the document times
    log(1 + N / the documents it occurs in). `docs` is the whole scanned corpus, matches or not."""
    counted = [term for term, positive in leaves(tree) if positive]
    counts = [[sum(occurrences(term, doc).values()) for term in counted] for doc in docs]
    total = len(docs)
    holding = [sum(1 for row in counts if row[i]) for i in range(len(counted))]
    weights = [math.log(1 + total / df) if df else 0.0 for df in holding]
    return [sum(tf * w for tf, w in zip(row, weights, strict=True)) for row in counts]

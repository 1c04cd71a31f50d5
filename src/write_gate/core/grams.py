"""Trigrams of a node's search text, for finding a substring from a full-text index instead of reading every node.

`search_nodes` answers the nodes whose search text (`_search`, folded: `core.identity`) contains the folded query.
Every node also holds `_grams`: each run of three characters of its search text, separated by spaces, which the
engines' full-text indexes hold as words. A query's trigrams are all in the `_grams` of every node that contains
the query, so the index's answer to "all of these trigrams" holds every match (and some nodes that hold the
trigrams apart); `CONTAINS` decides each. A query shorter than a trigram, or with no trigram an index can hold,
has no such answer: it is scanned.

Full-text tokenizers split words on punctuation and white space (RediSearch, Tantivy), so before the trigrams are
cut, the space and the commonest punctuation of names (`-`, `.`, `'`, `_`, `/`) are each written as a letter of its
own from the Canadian syllabics, which no folding changes and both tokenizers keep in a word. Six, because the
statement nests a `replace` for each and FalkorDB's parser doubles its time with each one past six. A trigram
holding any other character that is neither a letter nor a digit (`,`, `€`, an emoji) may be split by a
tokenizer: a query never asks for one (a query with no other trigram is scanned).

The trigrams of a node the write creates are cut here (`grams_text`); those of a node whose text a write rebuilds,
in the statement (`core.cypher.clauses.grams_of`), identically: a unit test holds the two to each other.
"""

GRAM = 3
GRAMS_FIELD = "_grams"
# Characters a tokenizer splits on, each written as a syllabic (U+1401 on) before trigrams are cut.
SPLIT = " -.'_/"
STAND_INS = "".join(chr(0x1401 + i) for i in range(len(SPLIT)))
_STAND_IN = str.maketrans(SPLIT, STAND_INS)
# The statement cuts long text in chunks, so that each trigram is cut from a short string: an engine's substring of a
# long UTF-8 string walks it from its start (FalkorDB: 2,000 characters cost 8x per character what 55 did).
CHUNK = 64
# A query asks the index for at most this many of its trigrams, spread over it: an index intersects the lists of
# the nodes holding each, and a common trigram's list holds most nodes (at 300,000 nodes, "met at event 45" took
# 37 ms with all 13 of its trigrams, 8 ms with 3 of them, for the same candidates).
MAX_QUERY_GRAMS = 4

assert len(STAND_INS) == len(SPLIT) and all(c.isalnum() for c in STAND_INS)


def stood_in(text: str) -> str:
    return text.translate(_STAND_IN)


def grams_text(search_text: str) -> str:
    """`_grams` of a node with this search text: " g1 g2 ...", each trigram after a space."""
    mapped = stood_in(search_text)
    return "".join(" " + mapped[i : i + GRAM] for i in range(len(mapped) - GRAM + 1))


def query_grams(folded_query: str) -> list[str]:
    """The trigrams of a folded query an index holds as words (letters and digits only, once each), at most
    `MAX_QUERY_GRAMS` spread over it, first and last included; empty when it has none (the caller scans)."""
    mapped = stood_in(folded_query)
    found = dict.fromkeys(mapped[i : i + GRAM] for i in range(len(mapped) - GRAM + 1))
    grams = [g for g in found if g.isalnum()]
    if len(grams) <= MAX_QUERY_GRAMS:
        return grams
    last = len(grams) - 1
    return [grams[round(i * last / (MAX_QUERY_GRAMS - 1))] for i in range(MAX_QUERY_GRAMS)]

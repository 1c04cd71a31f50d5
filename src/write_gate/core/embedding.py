"""Embeddings (issue 38), the pure part: the provider contract, which texts of an entity are embedded (one
vector per text: its name, each observation, each embedded property), their hashes, and rank fusion.

One vector per text, not per entity: a write embeds only the texts it brings (an appended observation is one
text, the gate never needs the ones already stored), and an entity is as close to a query as its closest text.
"""

import hashlib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

# What a label without an `embed` list in its registry entry embeds.
DEFAULT_EMBED_FIELDS = ("name", "observations")
# Reciprocal rank fusion's constant (Cormack et al. 2009): a hit's fused score is the sum of 1 / (k + rank).
RRF_K = 60


class EmbeddingFailed(Exception):
    """The provider gave no vectors (unreachable, refused, or an answer of the wrong shape)."""


@runtime_checkable
class EmbeddingProvider(Protocol):
    name: str
    model: str
    dimension: int
    # Whether embed() answers unit vectors already rounded to VECTOR_DECIMALS (the gate need not do it again).
    normalizes: bool

    def embed(self, texts: list[str]) -> list[list[float]]: ...


@dataclass(frozen=True, slots=True)
class Text:
    """One text of an entity to embed: the field it is from and its hash (of field and text, so one text in two
    fields is two vectors, each replaced with its own field)."""

    field: str
    text: str
    hash: str


def text_hash(field: str, text: str) -> str:
    return hashlib.sha256(f"{field}\0{text}".encode()).hexdigest()[:32]


def embed_fields(entry_fields: Sequence[str] | None) -> tuple[str, ...]:
    return tuple(entry_fields) if entry_fields else DEFAULT_EMBED_FIELDS


def texts_of(fields: Iterable[str], values: Mapping[str, Any]) -> tuple[list[str], list[Text]]:
    """The embedded fields `values` carries (a write replaces their texts) and their texts: a string is one, a
    list of strings one per item (observations); blank text and other types are not embedded."""
    carried, texts = [], []
    for field in fields:
        if field not in values:
            continue
        carried.append(field)
        value = values[field]
        items = value if isinstance(value, list) else [value]
        for item in dict.fromkeys(i for i in items if isinstance(i, str) and i.strip()):
            texts.append(Text(field, item, text_hash(field, item)))
    return carried, texts


# A vector's components are sent as Cypher text (FalkorDB's parameters): 5 decimals halve the text the engine parses
# (a write's cost) and move a cosine by under 1e-4.
VECTOR_DECIMALS = 5


def normalized(vector: Sequence[float]) -> list[float]:
    """Unit length, so a dot product is the cosine (a zero vector stays zero), to VECTOR_DECIMALS."""
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [round(float(x) / norm, VECTOR_DECIMALS) for x in vector]


# Words a question is made of that say nothing about its answer: in a hybrid search's full-text half they would
# rank every entity holding "who" or "the" (RRF then lifts those over a semantic-only hit).
_FUNCTION_WORDS = (
    "a an the and or not nor but if of on in at to for from by with about into onto over under as is are was were be "
    "been being am do does did done has have had having it its this that these those there here who whom whose what "
    "which when where why how i me my we our you your he him his she her they them their any some all no yes can "
    "could would should will shall may might must than then so too very just also"
)
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS.split())
_WORD = re.compile(r"\w+")


def has_word(text: str) -> bool:
    """Whether a plain-text query has anything to embed (punctuation alone embeds as noise)."""
    return _WORD.search(text) is not None


def question_query(text: str, max_words: int = 32) -> str | None:
    """A plain-text question as a full-text query matching any of its content words (`works OR rockets`); None when
    it has none. The query language's operators (AND, OR, NOT) are dropped, not read."""
    words = [w for w in _WORD.findall(text) if w.lower() not in FUNCTION_WORDS]
    unique = list(dict.fromkeys(words))[:max_words]
    return " OR ".join(unique) if unique else None


def fused(rankings: Sequence[Sequence[int]], k: int = RRF_K) -> dict[int, float]:
    """Reciprocal rank fusion of rankings of node ids (best first): each id's sum of 1 / (k + rank), rank from 1."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, node_id in enumerate(ranking, start=1):
            scores[node_id] = scores.get(node_id, 0.0) + 1.0 / (k + rank)
    return scores

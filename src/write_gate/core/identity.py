"""A node's identity and its search text, both computed here in Python and stored on the node.

Identity: one internal property `_key` per node, a canonical JSON text of its merge keys. Engines
disagree on strings at the edges of white space (FalkorDB's index misses `" x "` and `""`), so no
MERGE or lookup ever compares the raw key values: `_key` is ASCII, starts with `{` and ends with `}`,
and is the only property indexed (and, on Memgraph, unique) per label, composite keys included.

Search: each agent-written string (and each item of a string list) is folded here, with full Unicode
case folding and NFKC normalisation, into `_f_<property>` (a list aligned with the value), and the
node's `_search` text is the join of every `_f_` list. Engines' own `toLower` folds ASCII only
(Memgraph), so a statement never folds case itself: it compares stored folded text with a folded query.
"""

import functools
import hashlib
import itertools
import json
import math
import unicodedata
from collections.abc import Mapping
from typing import Any

KEY_FIELD = "_key"
SEARCH_FIELD = "_search"
FOLD_PREFIX = "_f_"
# The label, and the type as the agent wrote it (`city` remapped to Entity stays searchable as "city").
LABEL_FOLD_FIELD = FOLD_PREFIX + "_label"
# Separates folded values inside `_search`; folding turns every control character into a space, so it
# never occurs inside a value (or a folded query): a match can never span two values. A tab, because the
# engines' full-text tokenizers split words on it (FalkorDB's does not split on a newline, which `_search`
# used before migration 0007).
SEPARATOR = "\t"
OLD_SEPARATOR = "\n"

_INT64 = 2**63
# One encoder for every key: `json.dumps` with options builds a new one per call, a third of a key's cost.
_KEY_ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
MAX_PLAIN_KEY = 1024
HASHED_KEY_PREFIX = "#sha256:"


def _canonical(value: Any) -> Any:
    # 1 and 1.0 are one key, as they are equal in Cypher; true and 1 are not.
    if isinstance(value, float) and not isinstance(value, bool) and value.is_integer() and abs(value) < _INT64:
        return int(value)
    return value


def identity_key(merge_keys: Mapping[str, Any]) -> str:
    """`{"name":"Alice "}`: sorted keys, no spaces between tokens, every non-ASCII character escaped. Past
    `MAX_PLAIN_KEY` characters, `#sha256:` and the text's digest: FalkorDB's index finds no string longer
    than 4,096 bytes (a MERGE on one duplicates), and a canonical text never starts with `#`."""
    canonical = {key: _canonical(value) for key, value in merge_keys.items()}
    text = _KEY_ENCODER.encode(canonical)
    if len(text) <= MAX_PLAIN_KEY:
        return text
    return HASHED_KEY_PREFIX + hashlib.sha256(text.encode("ascii")).hexdigest()


def fold(text: str) -> str:
    """Full Unicode case folding with compatibility normalisation on both sides (NFKC, casefold, NFKC),
    control characters to spaces: `ΣΊΣΥΦΟΣ` and `σίσυφος` fold alike, as do `İstanbul` and `İstanbul`."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    if not folded.isprintable():
        folded = "".join(ch if ch.isprintable() else " " for ch in folded)
    return folded


def folded_value(value: Any) -> list[str] | None:
    """A property value's searchable form, aligned with it; None for values with no text."""
    if isinstance(value, str):
        return [fold(value)]
    if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        return [fold(item) for item in value]
    return None


def folded_properties(*maps: Mapping[str, Any]) -> dict[str, list[str]]:
    """`{"_f_name": ["alice"], ...}` for every text-valued property written; keys whose new value has no
    text get an empty list, so an overwritten text stops matching."""
    out: dict[str, list[str]] = {}
    for values in maps:
        for key, value in values.items():
            out[FOLD_PREFIX + key] = folded_value(value) or []
    return out


def label_fold(label: str, remapped_from: str | None) -> list[str]:
    return list(_label_fold(label, remapped_from))


@functools.lru_cache(maxsize=1024)  # the same few labels on every write: a batch folds each once
def _label_fold(label: str, remapped_from: str | None) -> tuple[str, ...]:
    texts = [fold(label)]
    if remapped_from:
        texts.append(fold(remapped_from.lstrip(":")))
    return tuple(texts)


def keys_displayed_as(display: str) -> list[str]:
    """The identity keys (`identity_key`) a node named by its merge keys could have, where reads name it
    `key=value,...` (a node with no `name`): each value as text, and as the number or boolean it reads as.
    Nothing for a text that is not of that form (a value holding `,` or `=` cannot be told apart)."""
    pairs = [part.split("=", 1) for part in display.split(",")]
    if not pairs or any(len(pair) != 2 or not pair[0] for pair in pairs):
        return []
    choices = [[(key, value) for value in _readings(text)] for key, text in pairs]
    keys: list[str] = []
    for combination in itertools.product(*choices):
        key = identity_key(dict(combination))
        if key not in keys:
            keys.append(key)
    return keys


def _readings(text: str) -> list[Any]:
    """A displayed value as the values it may have been: text, and the number or boolean Python writes so."""
    readings: list[Any] = [text]
    if text in ("True", "False"):
        readings.append(text == "True")
    else:
        try:
            readings.append(int(text))
        except ValueError:
            try:
                number = float(text)
            except ValueError:
                return readings
            if math.isfinite(number):
                readings.append(number)
    return readings

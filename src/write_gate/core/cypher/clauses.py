"""The clauses and property sets several statement families share: search text, stamps, matching by
identity, stubs, weights, the relationship-type guard of deletes.

Nodes are found by their identity property `_key` (see `core.identity`), never by raw key values.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from write_gate.core.claims import claim_properties
from write_gate.core.cypher.dialect import Dialect
from write_gate.core.cypher.stat_counts import due
from write_gate.core.cypher.statement import Provenance
from write_gate.core.grams import CHUNK, GRAM, GRAMS_FIELD, SPLIT, STAND_INS, grams_text
from write_gate.core.identifiers import CREATED_FIELD, PROPERTY_REMAPS_FIELD, PROVENANCE_FIELDS, REMAP_FIELD, quote
from write_gate.core.identity import (
    FOLD_PREFIX,
    KEY_FIELD,
    LABEL_FOLD_FIELD,
    SEARCH_FIELD,
    SEPARATOR,
    folded_properties,
    label_fold,
)

# The node's search text: the join of its folded `_f_` lists, rebuilt by every write that changes them.
_SEPARATOR_LITERAL = "'\\t'"
assert SEPARATOR == "\t"  # the literal above is that character, written the way Cypher reads it


def refresh_search_text(var: str, dialect: Dialect, carried: str | None = None) -> str:
    """`WITH ...` then `SET var._search = ..., var._grams = ...`. The WITH is needed: FalkorDB evaluates the
    properties of a node SET earlier in the same clause chain as they were before that SET, and sees them after a
    WITH. The node's properties are read once (`searched`), not once per folded list; its text is built once."""
    return (
        f"WITH {carried or var}, properties({var}) AS searched\n"
        f"WITH {carried or var}, {search_text_of('searched', dialect)} AS searched_text\n"
        f"SET {set_search_text(var, 'searched_text', dialect)}"
    )


def search_text_of(props: str, dialect: Dialect, unless_in: str | None = None) -> str:
    """The search text of the properties map `props`: the join of its folded `_f_` lists (`unless_in`: but for those
    the map `unless_in` holds too), each value after a tab (`Dialect.join`: FalkorDB's `+` loses characters of a
    string built to 512 or 1,024 bytes)."""
    other = f" AND NOT k IN keys({unless_in})" if unless_in else ""
    folded = f"[k IN keys({props}) WHERE k STARTS WITH '{FOLD_PREFIX}'{other}]"
    values = dialect.join(f"[x IN {props}[k] | {_SEPARATOR_LITERAL} + coalesce(x, '')]", "v")
    return dialect.join(f"[k IN {folded} | {values}]", "w")


def set_search_text(var: str, text: str, dialect: Dialect) -> str:
    """`var._search = text, var._grams = ...`: the search text and its trigrams (`text` a variable: read twice)."""
    return f"{var}.{SEARCH_FIELD} = {text}, {var}.{GRAMS_FIELD} = {grams_of(text, dialect)}"


def _literal(char: str) -> str:
    escaped = {"'": "\\'", "\\": "\\\\"}.get(char, char)
    return f"'{escaped}'"


def _stood_in(text: str) -> str:
    """`text` with each character a tokenizer splits on written as its stand-in (`core.grams`): nested `replace`s,
    no `reduce` (FalkorDB's reduce over strings has answered garbage and hung its server)."""
    for char, stand_in in zip(SPLIT, STAND_INS, strict=True):
        text = f"replace({text}, {_literal(char)}, '{stand_in}')"
    return text


def grams_of(text: str, dialect: Dialect) -> str:
    """The trigrams of the search text `text` (a variable), as `core.grams.grams_text` cuts them: " g1 g2 ...". Cut
    in chunks of `CHUNK` characters that overlap by two (an engine's substring walks a long string from its start),
    each chunk's characters stood in for, then cut into its trigrams. Measured on FalkorDB (a busy machine): about
    60 us for 55 characters, 0.4 ms for 500, 1.9 ms for 2,000, 11 ms for 10,000: a write whose text is known before
    it runs (a node it creates) gets its trigrams from the gate instead."""
    step = CHUNK - GRAM + 1
    # Its own variable names: the statements around it name their nodes `n`, `c`. `size_`: the text's size, counted
    # once (a UTF-8 string's size is counted character by character).
    length = f"CASE WHEN size_ - j_ < {CHUNK} THEN size_ - j_ ELSE {CHUNK} END"
    chunks = f"[j_ IN range(0, size_ - {GRAM}, {step}) | substring({text}, j_, {length})]"
    cut = dialect.join(f"[i_ IN range(0, size(x_) - {GRAM}) | ' ' + substring(x_, i_, {GRAM})]", "g")
    joined = dialect.join(f"[c_ IN {chunks} | [x_ IN [{_stood_in('c_')}] | {cut}][0]]", "h")
    return f"[size_ IN [size({text})] | {joined}][0]"


def stamp(var: str, source: str = "$", fields: tuple[str, ...] = PROVENANCE_FIELDS) -> str:
    """`n.confidence = $confidence, ...`, or from a row: `n.confidence = row.confidence, ...`; and the subject is
    due for the statistics' fold (core/stat_counts.py): a stamp is what every write that changes a count sets."""
    return ", ".join([*(f"{var}.{name} = {source}{name}" for name in fields), due(var)])


def identity_properties(label: str, keys: Mapping[str, Any], provenance: Provenance) -> dict[str, Any]:
    """Set when a node is created: its merge keys (with their claims: whoever first named the node), their
    folded text, its label's, and when it was created."""
    return {
        **keys,
        **claim_properties(keys, provenance.claim()),
        **folded_properties(keys),
        LABEL_FOLD_FIELD: label_fold(label, None),
        CREATED_FIELD: provenance.last_updated,
    }


def written_properties(
    properties: Mapping[str, Any], provenance: Provenance, property_remaps: Sequence[str] = ()
) -> dict[str, Any]:
    """What a write sets besides the stamp: the properties, each one's claim, their folded text, and the
    property names it remapped (not searched: a name is not the node's text)."""
    return {
        **properties,
        **claim_properties(properties, provenance.claim()),
        **folded_properties(properties),
        **property_breadcrumb(property_remaps),
    }


def remapped_label_text(label: str, remapped_from: str | None) -> dict[str, Any]:
    """Set with a remapped write's properties: the label's folded text with the label as written beside it."""
    return {} if remapped_from is None else {LABEL_FOLD_FIELD: label_fold(label, remapped_from)}


def property_breadcrumb(property_remaps: Sequence[str]) -> dict[str, list[str]]:
    """Set with the properties, so a write that remapped none leaves an earlier write's record alone."""
    return {PROPERTY_REMAPS_FIELD: list(property_remaps)} if property_remaps else {}


def stub_properties(
    label: str, keys: Mapping[str, Any], provenance: Provenance, remapped_from: str | None = None
) -> dict[str, Any]:
    """A stub is created with nothing but its keys, so its whole search text is known here; under a remapped
    label it keeps the label it was sent as (`_schema_remap_from`), as any node written under one does."""
    props = identity_properties(label, keys, provenance)
    text = search_text(props)
    breadcrumb = {REMAP_FIELD: remapped_from} if remapped_from is not None else {}
    return {**props, SEARCH_FIELD: text, GRAMS_FIELD: grams_text(text), **breadcrumb}


def search_text(*maps: Mapping[str, Any]) -> str:
    """The search text of a node created with these properties (their `_f_` lists, in order): what
    `refresh_search_text` would compute from them, known before the write that creates it."""
    texts = [
        text for props in maps for name, values in props.items() if name.startswith(FOLD_PREFIX) for text in values
    ]
    return "".join(SEPARATOR + text for text in texts)


def match_node(var: str, label: str, param: str) -> str:
    return f"MATCH ({var}:{quote(label)} {{{KEY_FIELD}: {param}}})"


def merge_stub(var: str, label: str, key_param: str, stub_param: str, source: str = "$") -> list[str]:
    """Absent endpoints are created by their keys, flagged as stubs, and stamped like any write."""
    return [
        f"MERGE ({var}:{quote(label)} {{{KEY_FIELD}: {key_param}}})",
        f"ON CREATE SET {var} += {stub_param}, {var}._stub = true, {stamp(var, source)}",
    ]


WEIGHT = [
    # Weight: 1.0 unless given; a new weight for an existing relationship is averaged with the old one.
    # `{now}` is the write's last_updated: a relationship's created_at is set once, here.
    "ON CREATE SET {r}.weight = coalesce({w}, 1.0), {r}.created_at = {now}",
    "ON MATCH SET {r}.weight = CASE WHEN {w} IS NULL THEN coalesce({r}.weight, 1.0)"
    " ELSE (coalesce({r}.weight, 1.0) + {w}) / 2 END",
]


def relationship_properties(properties: Mapping[str, Any], provenance: Provenance) -> dict[str, Any]:
    """A relationship's properties as written: each with its claim."""
    return {**properties, **claim_properties(properties, provenance.claim())}


def relationship_set(remapped: bool) -> str:
    """The SET clause every relationship write ends with: its properties, then the provenance stamp."""
    sets = ["r += $properties", stamp("r")]
    if remapped:
        sets.append("r._schema_remap_from = $remapped_from")
    return "SET " + ",\n    ".join(sets)


def types_guard(var: str, allowed_types: list[str] | None) -> list[str]:
    """A delete removes the node's relationships too: only if the agent may write every one of their types."""
    if allowed_types is None:
        return []
    return [
        f"OPTIONAL MATCH ({var})-[rel]-()",
        f"WITH {var}, collect(DISTINCT type(rel)) AS types",
        "WHERE all(t IN types WHERE t IN $allowed_types)",
    ]

"""Writes that decide inside their own statement (issue 28, items 1 and 4): one round trip for a write that meets
no other writer's value, its change record included.

The statement merges the subject, then compares each incoming value with what the subject holds: a value another
writer claims (another agent, or another source: `core.conflicts.is_conflict`) that the write would change is a
clash. With none, the write is the one `core.guard` would have decided (every incoming value written, none
weighed), so the statement makes it and appends its record (`core.history`: every value it changes, none for one
written again unchanged; every value and the identity when it created the subject), with its revision and its
`seq` (core/cypher/change_order.py). With a clash it changes nothing and answers what the subject holds, and the
gate decides under the conflict policies and writes guarded by the revision (core/cypher/records.py), as it did
for every write before. An alias writes nothing and answers no row (the gate follows it).

Both engines decide it right: FalkorDB runs a graph's writes one at a time, and Memgraph refuses one of two
transactions that write one node or relationship (the driver runs it again, on what the other wrote).

"Unchanged" is the gate's: the same type and value, so 1 and 1.0 differ (Cypher's `=` holds them equal): a
number is also compared as text (`toString`); the write names those properties in `numbers`. Lists compare item
by item, in Cypher as in Python ([1] is [1.0]). FalkorDB evaluates every branch of a CASE, so no expression here
applies a function to a value that may not be of its type.

Parameters (`$`, or a batch row's `row.`): `key`; `values` (the agent's properties), `extra` (what the gate sets
beside them: claims, folded text, remap breadcrumbs), `numbers` (absent: none), `change_id`; a
node's `identity` (set when created) and `key_names`; a relationship's `from_key`, `to_key`, `weight` and stubs.
And, shared by a batch's rows (`$`): the provenance stamp and `claim` (the write's value claim).
"""

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from write_gate.core.claims import CLAIM_PREFIX, claim_properties
from write_gate.core.cypher.aliases import not_alias, unless_alias
from write_gate.core.cypher.change_order import keyed, next_seq, set_seq
from write_gate.core.cypher.clauses import (
    identity_properties,
    match_node,
    merge_stub,
    property_breadcrumb,
    search_text,
    search_text_of,
    set_search_text,
    stamp,
    stub_properties,
)
from write_gate.core.cypher.dialect import Dialect
from write_gate.core.cypher.hierarchy import keeping_one_parent
from write_gate.core.cypher.statement import Endpoint, Provenance, Statement
from write_gate.core.decisions import NodePlan
from write_gate.core.grams import GRAMS_FIELD, grams_text
from write_gate.core.history import (
    AFTER_VALUES,
    BEFORE_CLAIMS,
    BEFORE_VALUES,
    CHANGE_LABEL,
    PROPERTIES,
    REVISION_FIELD,
    Op,
)
from write_gate.core.identifiers import quote, string_literal
from write_gate.core.identity import (
    FOLD_PREFIX,
    KEY_FIELD,
    LABEL_FOLD_FIELD,
    SEARCH_FIELD,
    folded_properties,
    identity_key,
    label_fold,
)

_CREATED = 0  # the revision a statement gives what its MERGE created, until its write moves it to 1


def _sources(batch: bool) -> tuple[str, str, tuple[str, ...]]:
    """Where a statement takes an item's parameters, and the write's provenance stamp; the variables a batch's
    rows carry through every WITH."""
    return ("row.", "prov.", ("row", "prov")) if batch else ("$", "$", ())


def _rows(batch: bool) -> list[str]:
    """A batch's rows, each with its provenance from the batch's table of them (most batches have one)."""
    return ["UNWIND $rows AS row", "WITH row, $provenances[row.p] AS prov"] if batch else []


# The item's values, what the gate sets beside them and which are numbers, each read from the parameters once: a
# parameter read again and again costs FalkorDB a copy each time (about 0.15 ms of a single write's 0.7).
_BOUND = "values, extra, numbers"


def _bound(src: str) -> str:
    return f"{src}values AS values, {src}extra AS extra, coalesce({src}numbers, []) AS numbers"


def _same(stored: str, incoming: str, name: str) -> str:
    """Whether `stored` is `incoming` to the gate (core/history.py's `_same`): equal, and of one type, so 1 and 1.0
    differ (lists compare item by item as Cypher and Python both do: [1] is [1.0]). Safe for any value: FalkorDB
    evaluates each branch of a CASE, so `toString` only ever sees the number (else 0)."""
    equal = f"{stored} = {incoming}"
    number = f"{name} IN numbers"
    as_text = (
        f"toString(CASE WHEN {number} AND {equal} THEN {stored} ELSE 0 END)"
        f" = toString(CASE WHEN {number} THEN {incoming} ELSE 0 END)"
    )
    return f"(coalesce({equal}, false) AND {as_text})"


def _claim_of(name: str) -> str:
    return f"now['{CLAIM_PREFIX}' + {name}]"


def _changing() -> str:
    """The incoming values that differ from what the subject holds (all of them, when it was just created)."""
    return f"[k IN keys(values) WHERE created OR NOT {_same('now[k]', 'values[k]', 'k')}]"


def _clear(shared: str) -> str:
    """No value the write gives is another writer's (another agent, or another source): one it changes is a clash,
    and one it restates is the gate's to weigh (a weaker writer restating a protected value must not take its
    claim: core/conflicts.py), so either goes the guarded way."""
    claim = _claim_of("k")
    other_writer = f"({claim}[0] <> {shared}written_by OR {claim}[1] <> {shared}source)"
    return f"size([k IN keys(values) WHERE now[k] IS NOT NULL AND {claim} IS NOT NULL AND {other_writer}]) = 0"


def _retexts() -> str:
    """Whether the write changes the node's folded text: a value it writes holds text, or held some."""
    fold = f"'{FOLD_PREFIX}' + k"
    return f"any(k IN keys(values) WHERE size(coalesce(now[{fold}], [])) > 0 OR size(coalesce(extra[{fold}], [])) > 0)"


def _record(subject: str, var: str, after: str, src: str, shared: str) -> str:
    """The change record of the values `changed` (see core/history.py), `after` giving each one's new value."""
    return (
        f"{{change_id: {src}change_id, at: {shared}last_updated, seq: seq, "
        f"revision: coalesce({var}.{REVISION_FIELD}, 0) + 1, op: '{Op.SET.value}', {subject}, "
        f"agent: {shared}written_by, claim: {shared}claim, {PROPERTIES}: changed, "
        # Nothing before a subject the write created: its lists of what was before are left out.
        f"{BEFORE_VALUES}: CASE WHEN created THEN null ELSE"
        " [k IN changed | CASE WHEN now[k] IS NULL THEN [] ELSE [now[k]] END] END, "
        f"{AFTER_VALUES}: [k IN changed | [{after}]], "
        f"{BEFORE_CLAIMS}: CASE WHEN created THEN null ELSE [k IN changed | coalesce({_claim_of('k')}, [])] END}}"
    )


def _write_if_clear(sets: list[str], batch: bool, *more: str) -> list[str]:
    """The write and its record (and `more` clauses), when nothing clashed (`go`); nothing otherwise. A FOREACH
    runs its clauses only for the items of its list, so what they compute is computed only then."""
    return [
        "FOREACH (w IN CASE WHEN go THEN [1] ELSE [] END |",
        "  SET " + ",\n      ".join(sets),
        f"  FOREACH (h IN CASE WHEN size(record.{PROPERTIES}) > 0 THEN [1] ELSE [] END |"
        # A batch's records of one millisecond in the order of its items (core/feed_windows.py).
        f" CREATE (c:{CHANGE_LABEL}) SET c += record, {keyed('c', 'record.seq', 'row.i' if batch else '0')})",
        *(f"  {clause}" for clause in more),
        ")",
    ]


@functools.lru_cache(maxsize=1024)
def node_write(label: str, remapped: bool, batch: bool, dialect: Dialect) -> str:
    """Single (`$`) or a batch's rows (`UNWIND $rows AS row`, each answered by its `i`). Returns `written` (false:
    a clash; `current` holds what the node holds), no row for an alias. A batch's rows carry `remapped_from`
    (null: none, which leaves an earlier breadcrumb alone) and the label's folded text only when remapped
    (`label_fold`, else the shared one)."""
    src, shared, carried = _sources(batch)
    found = ", ".join((*carried, "n"))
    keep = f"{found}, {_BOUND}"
    subject = f"subject: 'node', label: {string_literal(label)}, key: {src}key"
    after = f"coalesce(values[k], {src}identity[k])"
    created = (
        f"n += {src}identity, n.{SEARCH_FIELD} = {src}search, n.{GRAMS_FIELD} = {src}grams, "
        f"n.{REVISION_FIELD} = {_CREATED}"
    )
    if batch:
        created += ", n._f__label = coalesce(row.label_fold, $label_fold), n.created_at = prov.last_updated"
    sets = ["n += values", "n += extra", stamp("n", shared), "n._stub = null"]
    if batch:
        sets.append("n._schema_remap_from = coalesce(row.remapped_from, n._schema_remap_from)")
    elif remapped:
        sets.append("n._schema_remap_from = $remapped_from")
    sets += [f"n.{REVISION_FIELD} = coalesce(n.{REVISION_FIELD}, 0) + 1", set_seq("n")]
    retext = _retexts() + (" OR row.remapped_from IS NOT NULL" if batch else " OR true" if remapped else "")
    # A node it created has the search text it was created with (known before the write); one that was there gets
    # its own rebuilt where the write changes its text, from what it held and the folded text the write sets.
    search = dialect.join(
        f"[{search_text_of('now', dialect, unless_in='extra')}, {search_text_of('extra', dialect)}]", "t"
    )
    lines = [
        *_rows(batch),
        f"MERGE (n:{quote(label)} {{{KEY_FIELD}: {src}key}})",
        f"ON CREATE SET {created}",
        # Not an alias (no row: the gate follows it), in the step that reads the node (a step less per row).
        f"WITH {found}, {_bound(src)}, properties(n) AS now, n.{REVISION_FIELD} = {_CREATED} AS created, "
        f"{next_seq(['n'], f'{shared}last_updated')} AS seq WHERE {not_alias('n')}",
        f"WITH {keep}, now, created, seq, CASE WHEN created THEN {src}key_names ELSE [] END + {_changing()} AS changed",
        # A node it created holds only its identity, this writer's: nothing to clash with.
        f"WITH {keep}, now, seq, {_clear(shared)} AS go, NOT created AND ({retext}) AS retext,\n"
        f"     {_record(subject, 'n', after, src, shared)} AS record",
        *_write_if_clear(
            sets,
            batch,
            f"FOREACH (text IN CASE WHEN retext THEN [{search}] ELSE [] END |"
            f" SET {set_search_text('n', 'text', dialect)})",
        ),
        f"RETURN {_answer(batch)}",
    ]
    return "\n".join(lines)


def _answer(batch: bool) -> str:
    """Whether it was written, and else what the subject holds (for the gate to decide on: it wrote nothing, so
    what it read); a batch's row `i`."""
    written = "go AS written, CASE WHEN go THEN null ELSE now END AS current"
    return f"row.i AS i, {written}" if batch else written


@functools.lru_cache(maxsize=1024)
def relationship_write(
    type_: str,
    from_label: str,
    to_label: str,
    merge_endpoints: bool,
    remapped: bool,
    batch: bool,
    hierarchy: bool = False,
) -> str:
    """As `node_write`, for a relationship between two nodes found by identity (or merged as stubs): its weight
    started (1.0 unless given) or averaged with the one given, and recorded with the values when it changes.
    Returns `written`, `current`, `weight`, `from_stub`, `to_stub`; no row when an endpoint is missing (unless
    merged) or an alias, or (`hierarchy`: the type is the hierarchy's, a single write) where the link would give
    the child a second parent or make a cycle (core/cypher/hierarchy.keeping_one_parent)."""
    if hierarchy and batch:
        raise ValueError("a batch writes no hierarchy link: each is written alone, its refusal its own")
    src, shared, carried = _sources(batch)
    if merge_endpoints:
        ends = [
            *merge_stub("a", from_label, f"{src}from_key", f"{src}from_stub", shared),
            *merge_stub("b", to_label, f"{src}to_key", f"{src}to_stub", shared),
        ]
    else:
        ends = [match_node("a", from_label, f"{src}from_key"), match_node("b", to_label, f"{src}to_key")]
    found = ", ".join((*carried, "a", "b", "r"))
    keep = f"{found}, {_BOUND}"
    subject = (
        f"subject: 'relationship', label: {string_literal(type_)}, from_label: {string_literal(from_label)}, "
        f"from_key: {src}from_key, to_label: {string_literal(to_label)}, to_key: {src}to_key"
    )
    weight = (
        f"CASE WHEN created OR {src}weight IS NULL THEN coalesce(now.weight, {src}weight, 1.0)"
        f" ELSE (coalesce(now.weight, 1.0) + {src}weight) / 2 END"
    )
    sets = ["r.weight = weight", "r += values", "r += extra", stamp("r", shared)]
    if batch:
        sets.append("r._schema_remap_from = coalesce(row.remapped_from, r._schema_remap_from)")
    elif remapped:
        sets.append("r._schema_remap_from = $remapped_from")
    sets += [f"r.{REVISION_FIELD} = coalesce(r.{REVISION_FIELD}, 0) + 1", set_seq("r")]
    lines = [
        *_rows(batch),
        *ends,
        unless_alias("a", "b", carried=carried),
        *(keeping_one_parent("a", "b", type_) if hierarchy else []),
        f"MERGE (a)-[r:{quote(type_)}]->(b)",
        f"ON CREATE SET r.{REVISION_FIELD} = {_CREATED}, r.created_at = {shared}last_updated",
        f"WITH {found}, {_bound(src)}, properties(r) AS now, r.{REVISION_FIELD} = {_CREATED} AS created, "
        f"{next_seq(['r'], f'{shared}last_updated')} AS seq",
        f"WITH {keep}, now, created, seq, {weight} AS weight",
        # A weight is a stored value like any other: its change is recorded with the write's (issue 26, item 3).
        f"WITH {keep}, now, created, seq, weight, {_changing()}"
        " + CASE WHEN created OR NOT coalesce(now.weight = weight, false) THEN ['weight'] ELSE [] END AS changed",
        f"WITH {keep}, now, seq, weight, {_clear(shared)} AS go,\n"
        f"     {_record(subject, 'r', "CASE WHEN k = 'weight' THEN weight ELSE values[k] END", src, shared)}"
        " AS record",
        *_write_if_clear(sets, batch),
        f"WITH {found}, now, go",  # after a WITH: FalkorDB sees the weight a SET wrote
        f"RETURN {_answer(batch)}, r.weight AS weight, a._stub = true AS from_stub, b._stub = true AS to_stub",
    ]
    return "\n".join(lines)


# --- parameters ----------------------------------------------------------------------------------------------


def value_kinds(values: Mapping[str, Any], *, batch: bool) -> dict[str, list[str]]:
    """`numbers`: the properties whose value is a number (compared as text too, so 1 and 1.0 differ); a batch row
    leaves it out when there are none (a missing field reads as null)."""
    numbers = [name for name, value in values.items() if type(value) is int or type(value) is float]
    return {"numbers": numbers} if numbers or not batch else {}


def stamp_params(provenance: Provenance) -> dict[str, Any]:
    """The write's provenance stamp and its value claim: a single write's parameters, a batch's table entry."""
    return {**provenance.params(), "claim": provenance.claim()}


def planned_node_values(plan: NodePlan, change_id: str, *, batch: bool, label: str | None = None) -> dict[str, Any]:
    """node_values of a planned write (`label`: another than the plan's, as the benchmark's raw rows use)."""
    result = plan.result
    return node_values(
        result.label if label is None else label,
        result.merge_keys,
        plan.properties,
        plan.provenance,
        result.remapped_from,
        result.property_remaps,
        change_id,
        batch=batch,
    )


def node_values(
    label: str,
    merge_keys: Mapping[str, Any],
    properties: Mapping[str, Any],
    provenance: Provenance,
    remapped_from: str | None,
    property_remaps: Sequence[str],
    change_id: str,
    *,
    batch: bool,
) -> dict[str, Any]:
    """An item's parameters (a single write's own, or a batch row's: the batch adds `i` and `p`)."""
    claim = provenance.claim()
    folds, key_folds = folded_properties(properties), folded_properties(merge_keys)
    label_texts = {LABEL_FOLD_FIELD: label_fold(label, remapped_from)}
    extra = {**claim_properties(properties, claim), **folds, **property_breadcrumb(property_remaps)}
    search = search_text(key_folds, label_texts, folds)
    out: dict[str, Any] = {
        "key": identity_key(merge_keys),
        "key_names": list(merge_keys),
        "values": dict(properties),
        "extra": extra,
        "search": search,  # what a node it creates is found by
        "grams": grams_text(search),
        "change_id": change_id,
        **value_kinds(properties, batch=batch),
    }
    if remapped_from is not None:
        extra.update(label_texts)  # the label as written, folded: a node that was there is found by it too
    if batch:
        out["identity"] = {**merge_keys, **claim_properties(merge_keys, claim), **key_folds}
        out["remapped_from"] = remapped_from
        if remapped_from is not None:
            out["label_fold"] = label_texts[LABEL_FOLD_FIELD]
        return out
    out["identity"] = identity_properties(label, merge_keys, provenance)
    if remapped_from is not None:
        out["remapped_from"] = remapped_from
    return {**out, **stamp_params(provenance)}


def restamp_node_row(
    row: dict[str, Any], merge_keys: Mapping[str, Any], properties: Mapping[str, Any], provenance: Provenance
) -> None:
    """A batch row of `node_values` stamped again with `provenance` (its chunk is sent later than it was built:
    services/call_stamps.py): its claims, which are all in it that the stamp decides (the rest of the stamp is in
    the chunk's provenance table)."""
    claim = provenance.claim()
    row["extra"].update(claim_properties(properties, claim))
    row["identity"].update(claim_properties(merge_keys, claim))


def relationship_values(
    start: Endpoint,
    end: Endpoint,
    merge_endpoints: bool,
    properties: Mapping[str, Any],
    provenance: Provenance,
    weight: float | None,
    remapped_from: str | None,
    property_remaps: Sequence[str],
    change_id: str,
    *,
    batch: bool,
) -> dict[str, Any]:
    """As `node_values`, for a relationship."""
    out: dict[str, Any] = {
        "from_key": start.key,
        "to_key": end.key,
        "values": dict(properties),
        "extra": {**claim_properties(properties, provenance.claim()), **property_breadcrumb(property_remaps)},
        "weight": weight,
        "change_id": change_id,
        **value_kinds(properties, batch=batch),
    }
    if merge_endpoints:
        out["from_stub"] = stub_properties(start.label, start.keys, provenance, start.remapped_from)
        out["to_stub"] = stub_properties(end.label, end.keys, provenance, end.remapped_from)
    if batch:
        return {**out, "remapped_from": remapped_from}
    if remapped_from is not None:
        out["remapped_from"] = remapped_from
    return {**out, **stamp_params(provenance)}


def restamp_relationship_row(
    row: dict[str, Any],
    start: Endpoint,
    end: Endpoint,
    merge_endpoints: bool,
    properties: Mapping[str, Any],
    provenance: Provenance,
) -> None:
    """As `restamp_node_row`, for a batch row of `relationship_values`: its claims and its stubs."""
    row["extra"].update(claim_properties(properties, provenance.claim()))
    if merge_endpoints:
        row["from_stub"] = stub_properties(start.label, start.keys, provenance, start.remapped_from)
        row["to_stub"] = stub_properties(end.label, end.keys, provenance, end.remapped_from)


def node_statement(label: str, params: dict[str, Any], dialect: Dialect) -> Statement:
    return Statement(node_write(label, "remapped_from" in params, False, dialect), params)


def relationship_statement(
    type_: str, start: Endpoint, end: Endpoint, merge_endpoints: bool, params: dict[str, Any], hierarchy: bool = False
) -> Statement:
    remapped = "remapped_from" in params
    return Statement(
        relationship_write(type_, start.label, end.label, merge_endpoints, remapped, False, hierarchy), params
    )

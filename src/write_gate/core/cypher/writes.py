"""The gate's single writes: one node, one relationship, and the check that endpoints exist."""

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from write_gate.core.cypher.aliases import unless_alias
from write_gate.core.cypher.clauses import (
    WEIGHT,
    identity_properties,
    match_node,
    merge_stub,
    property_breadcrumb,
    refresh_search_text,
    relationship_properties,
    relationship_set,
    remapped_label_text,
    stamp,
    stub_properties,
    written_properties,
)
from write_gate.core.cypher.dialect import Dialect
from write_gate.core.cypher.records import (
    Guard,
    append_records,
    guarded_relationship_set,
    next_revision,
    revision_guard,
)
from write_gate.core.cypher.statement import Endpoint, Provenance, Statement
from write_gate.core.identifiers import quote
from write_gate.core.identity import (
    KEY_FIELD,
    identity_key,
)


@functools.lru_cache(maxsize=1024)
def _write_node_text(label: str, remapped: bool, guarded: bool, dialect: Dialect) -> str:
    sets = ["n += $properties", stamp("n"), "n._stub = null"]
    if remapped:
        sets.append("n._schema_remap_from = $remapped_from")
    lines = [f"MERGE (n:{quote(label)} {{{KEY_FIELD}: $key}})", "ON CREATE SET n += $identity", unless_alias("n")]
    if guarded:
        lines.append(revision_guard("n"))
        sets.append(next_revision("n"))
    lines.append("SET " + ",\n    ".join(sets))
    if guarded:
        lines += append_records()
    return "\n".join([*lines, refresh_search_text("n", dialect), "RETURN count(n) AS written"])


def write_node(
    label: str,
    merge_keys: Mapping[str, Any],
    properties: Mapping[str, Any],
    provenance: Provenance,
    remapped_from: str | None,
    property_remaps: Sequence[str] = (),
    guard: Guard | None = None,
    *,
    dialect: Dialect,
) -> Statement:
    """`guard`: the gate's writes are guarded by the revision they were decided on, and append their records
    (core/cypher/records.py); unguarded, the memory profile's create-if-absent wraps it."""
    # The text depends only on the label, whether it was remapped and guarded, so it is built once per shape.
    params: dict[str, Any] = {
        "key": identity_key(merge_keys),
        "identity": identity_properties(label, merge_keys, provenance),
        "properties": written_properties(properties, provenance, property_remaps)
        | remapped_label_text(label, remapped_from),
        **provenance.params(),
    }
    if remapped_from is not None:
        params["remapped_from"] = remapped_from
    if guard is not None:
        params.update(guard.params())
    return Statement(_write_node_text(label, remapped_from is not None, guard is not None, dialect), params)


def write_relationship(
    type_: str,
    start: Endpoint,
    end: Endpoint,
    properties: Mapping[str, Any],
    provenance: Provenance,
    remapped_from: str | None,
    merge_endpoints: bool,
    weight: float | None = None,
    property_remaps: Sequence[str] = (),
    guard: Guard | None = None,
) -> Statement:
    params: dict[str, Any] = {
        "from_key": start.key,
        "to_key": end.key,
        "properties": {**relationship_properties(properties, provenance), **property_breadcrumb(property_remaps)},
        "weight": weight,
        **provenance.params(),
    }
    if merge_endpoints:
        lines = [
            *merge_stub("a", start.label, "$from_key", "$from_stub"),
            *merge_stub("b", end.label, "$to_key", "$to_stub"),
        ]
        params["from_stub"] = stub_properties(start.label, start.keys, provenance, start.remapped_from)
        params["to_stub"] = stub_properties(end.label, end.keys, provenance, end.remapped_from)
    else:
        lines = [match_node("a", start.label, "$from_key"), match_node("b", end.label, "$to_key")]
    if remapped_from is not None:
        params["remapped_from"] = remapped_from
    lines += [unless_alias("a", "b"), f"MERGE (a)-[r:{quote(type_)}]->(b)"]
    if guard is None:
        lines += [
            *(line.format(r="r", w="$weight", now="$last_updated") for line in WEIGHT),
            relationship_set(remapped_from is not None),
        ]
    else:
        params.update(guard.params())
        lines += guarded_relationship_set(remapped_from is not None)
    lines.append("RETURN a._stub = true AS from_stub, b._stub = true AS to_stub, r.weight AS weight")
    return Statement("\n".join(lines), params)

"""Batches: one UNWIND statement per label (or relationship type and endpoint shape) and chunk of items, and
the rows each one takes."""

from collections.abc import Mapping, Sequence
from typing import Any

from write_gate.core.cypher.aliases import unless_alias
from write_gate.core.cypher.clauses import (
    identity_properties,
    match_node,
    merge_stub,
    property_breadcrumb,
    refresh_search_text,
    relationship_properties,
    stamp,
    stub_properties,
    written_properties,
)
from write_gate.core.cypher.records import (
    Guard,
    append_records,
    guarded_relationship_set,
    next_revision,
    revision_guard,
)
from write_gate.core.cypher.statement import Endpoint, Provenance
from write_gate.core.identifiers import quote
from write_gate.core.identity import (
    KEY_FIELD,
)


def write_nodes_batch(label: str) -> str:
    """Returns each written row's `i` (a row whose key is an alias, or whose node moved past the revision it
    was decided on, writes nothing). Rows carry `i`, `key`, `identity`, `properties`, the provenance fields,
    `remapped_from` (null when not remapped, which leaves an earlier breadcrumb alone) and the guard's
    `revision`, `changes` and `conflicts` (core/cypher/records.py)."""
    return (
        "UNWIND $rows AS row\n"
        f"MERGE (n:{quote(label)} {{{KEY_FIELD}: row.key}})\n"
        "ON CREATE SET n += row.identity\n"
        f"{unless_alias('n', carried=('row',))}\n"
        f"{revision_guard('n', 'row.', carried=('row',))}\n"
        f"SET n += row.properties, {stamp('n', 'row.')},\n"
        "    n._schema_remap_from = coalesce(row.remapped_from, n._schema_remap_from), n._stub = null,\n"
        f"    {next_revision('n', 'row.')}\n" + "\n".join(append_records("row.")) + "\n"
        f"{refresh_search_text('n', 'n, row')}\n"
        "RETURN row.i AS i"
    )


def write_relationships_batch(type_: str, from_label: str, to_label: str, merge_endpoints: bool) -> str:
    if merge_endpoints:
        lines = [
            *merge_stub("a", from_label, "row.from_key", "row.from_stub", "row."),
            *merge_stub("b", to_label, "row.to_key", "row.to_stub", "row."),
        ]
    else:
        lines = [match_node("a", from_label, "row.from_key"), match_node("b", to_label, "row.to_key")]
    return "\n".join(
        [
            "UNWIND $rows AS row",
            *lines,
            unless_alias("a", "b", carried=("row",)),
            f"MERGE (a)-[r:{quote(type_)}]->(b)",
            *guarded_relationship_set(False, "row.", carried=("row", "a", "b")),
            "SET r._schema_remap_from = coalesce(row.remapped_from, r._schema_remap_from)",
            "RETURN row.i AS i, r.weight AS weight, a._stub = true AS from_stub, b._stub = true AS to_stub",
        ]
    )


def node_row(
    i: int,
    label: str,
    key: str,
    merge_keys: Mapping[str, Any],
    properties: Mapping[str, Any],
    provenance: Provenance,
    remapped_from: str | None,
    property_remaps: Sequence[str],
    guard: Guard,
) -> dict[str, Any]:
    """One item's row of `write_nodes_batch`: `properties` are the ones its guard decided to write."""
    return {
        "i": i,
        "key": key,
        "identity": identity_properties(label, merge_keys, provenance),
        "properties": written_properties(label, properties, remapped_from, provenance, property_remaps),
        "remapped_from": remapped_from,
        **provenance.params(),
        **guard.params(),
    }


def relationship_row(
    i: int,
    start: Endpoint,
    end: Endpoint,
    keys: tuple[str, str],
    merge_endpoints: bool,
    properties: Mapping[str, Any],
    provenance: Provenance,
    property_remaps: Sequence[str],
    weight: float | None,
    remapped_from: str | None,
    guard: Guard,
) -> dict[str, Any]:
    """One item's row of `write_relationships_batch`; `keys`, the endpoints' identity keys."""
    row: dict[str, Any] = {"i": i, "from_key": keys[0], "to_key": keys[1]}
    if merge_endpoints:
        row["from_stub"] = stub_properties(start.label, start.keys, provenance)
        row["to_stub"] = stub_properties(end.label, end.keys, provenance)
    return {
        **row,
        "properties": {**relationship_properties(properties, provenance), **property_breadcrumb(property_remaps)},
        "weight": weight,
        "remapped_from": remapped_from,
        **provenance.params(),
        **guard.params(),
    }

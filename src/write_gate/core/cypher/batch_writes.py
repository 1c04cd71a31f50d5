"""Batches: one UNWIND statement per label (or relationship type and endpoint shape)."""

from write_gate.core.cypher.aliases import unless_alias
from write_gate.core.cypher.clauses import (
    match_node,
    merge_stub,
    refresh_search_text,
    stamp,
)
from write_gate.core.cypher.records import append_records, guarded_relationship_set, next_revision, revision_guard
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

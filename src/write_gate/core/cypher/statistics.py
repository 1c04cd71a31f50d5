"""Statistics statements: aggregates the engine computes, over the registry's labels and types only.

Each label is one branch of a UNION ALL, its place in the list the `part` column, so a label's name never has
to be a string in the text; the relationships are one scan, grouped by type. Each node (or relationship) gives
one row per dimension (`UNWIND`), and the engine groups them, so what comes back is one row per label (or type),
dimension and distinct value (agents, sources, ten confidence buckets, days), never a row per node.

Dimensions: `agent` (written_by), `source`, `confidence` (the bucket, 0..9, of the node's confidence; the
branch also answers each bucket's min, max and sum, for the distribution's min, mean and max), `day` (the date
it was first written: `created_at`, which the gate sets once, else `last_updated` for nodes written before it
kept one), and, for nodes, `archived`.

Aliases (nodes merged into another) are not entities and are left out; so are system nodes (`:Schema`,
history, `:SavedSearch`), whose labels no registry holds.
"""

import functools

from write_gate.core.cypher.aliases import not_alias
from write_gate.core.cypher.statement import Statement
from write_gate.core.history import CONFLICT_LABEL, ConflictStatus
from write_gate.core.identifiers import CREATED_FIELD, quote
from write_gate.core.identity import KEY_FIELD
from write_gate.core.knowledge import ARCHIVED_AT
from write_gate.core.statistics import BUCKETS


def confidence_bucket(var: str) -> str:
    """0..9 for a confidence in [0, 1] (1.0 in the last bucket, anything out of range in the nearest); null for
    none. toInteger truncates, which for a non-negative number is floor."""
    c = f"{var}.confidence"
    return (
        f"CASE WHEN {c} IS NULL THEN null WHEN {c} >= 1 THEN {BUCKETS - 1} WHEN {c} <= 0 THEN 0"
        f" ELSE toInteger({c} * {BUCKETS}) END"
    )


def _first_day(var: str) -> str:
    return f"substring(coalesce({var}.{CREATED_FIELD}, {var}.last_updated), 0, 10)"


def _dimensions(var: str, archived: bool) -> str:
    pairs = [
        f"['agent', {var}.written_by]",
        f"['source', {var}.source]",
        f"['confidence', {confidence_bucket(var)}]",
        f"['day', {_first_day(var)}]",
    ]
    if archived:
        pairs.append(f"['archived', {var}.{ARCHIVED_AT} IS NOT NULL]")
    return "[" + ", ".join(pairs) + "]"


_TALLY = (
    "RETURN {part} AS {key}, d[0] AS dimension, d[1] AS value, count(*) AS count,\n"
    "       min({var}.confidence) AS low, max({var}.confidence) AS high, sum({var}.confidence) AS total"
)


@functools.lru_cache(maxsize=16)
def node_tallies(labels: tuple[str, ...]) -> Statement | None:
    """Per label (`part`), dimension and value: how many nodes. Every node is in exactly one `archived` row, so
    those rows also count the label. None for no labels."""
    branches = [
        f"MATCH (n:{quote(label)}) WHERE {not_alias('n')}\n"
        f"UNWIND {_dimensions('n', archived=True)} AS d\n" + _TALLY.format(part=part, key="part", var="n")
        for part, label in enumerate(labels)
    ]
    return Statement("\nUNION ALL\n".join(branches)) if branches else None


# Per type (`name`), dimension and value: how many relationships of the types of `$types`; `count` rows count
# each type. One scan of every relationship: on FalkorDB a `()-[r:T]->()` per type scans every node again (each
# type cost as much as the whole scan, with or without relationships of its own).
RELATIONSHIP_TALLIES = Statement(
    "MATCH ()-[r]->() WHERE type(r) IN $types\n"
    f"UNWIND [['count', null]] + {_dimensions('r', archived=False)} AS d\n"
    + _TALLY.format(part="type(r)", key="name", var="r")
)


@functools.lru_cache(maxsize=16)
def oldest_and_newest(labels: tuple[str, ...]) -> Statement | None:
    """Per label (`part`), its least and most recently updated node (`end`: 'oldest' or 'newest'), with its
    name and identity; the caller picks across labels. None for no labels."""
    branches = []
    for part, label in enumerate(labels):
        for end, order in (("oldest", "ASC"), ("newest", "DESC")):
            branches.append(
                f"MATCH (n:{quote(label)}) WHERE {not_alias('n')} AND n.last_updated IS NOT NULL\n"
                f"WITH n ORDER BY n.last_updated {order}, n.{KEY_FIELD} {order} LIMIT 1\n"
                f"RETURN {part} AS part, '{end}' AS end, n.name AS name, n.{KEY_FIELD} AS key, n.last_updated AS at"
            )
    return Statement("\nUNION ALL\n".join(branches)) if branches else None


OPEN_CONFLICTS = Statement(
    f"MATCH (c:{CONFLICT_LABEL}) WHERE c.status = '{ConflictStatus.OPEN.value}'\nRETURN count(c) AS count"
)

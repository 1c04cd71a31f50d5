"""Statistics statements: aggregates the engine computes, over the registry's labels and types only.

Each label is one branch of a UNION ALL, its place in the list the `part` column, so a label's name never has
to be a string in the text; the relationships are one scan, grouped by type. The engine groups the nodes (or
relationships) by all their dimensions at once, then gives each group one row per dimension (`UNWIND`) and groups
those again, so what comes back is one row per label (or type), dimension and distinct value (agents, sources,
ten confidence buckets, days), never a row per node; and the unwinding is per group, not per node (five rows a
node cost more than the scan). These still read every entity and relationship: no index answers a count by
agent, source, confidence or day (issue 35, item 3).

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


def nanos(expr: str) -> str:
    """A confidence in whole billionths, rounded half up (core.statistics.nanos): summed exactly in any order."""
    # Spelled as a product: a long number in a statement's text reads as an inlined value (tests/unit/test_golden).
    return f"toInteger(floor({expr} * (1000 * 1000 * 1000) + 0.5))"


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


def _grouped(var: str, archived: bool, typed: bool = False) -> str:
    """Every dimension's value, with each group's count and confidence figures: one row per distinct combination
    (and type, `typed`)."""
    keys = [
        *([f"type({var}) AS name"] if typed else []),
        f"{var}.written_by AS agent",
        f"{var}.source AS source",
        f"{confidence_bucket(var)} AS bucket",
        f"{_first_day(var)} AS day",
    ]
    if archived:
        keys.append(f"{var}.{ARCHIVED_AT} IS NOT NULL AS archived")
    return (
        "WITH " + ", ".join(keys) + ",\n"
        f"     count(*) AS rows, min({var}.confidence) AS low, max({var}.confidence) AS high,"
        f" sum({nanos(f'{var}.confidence')}) AS total"
    )


def _dimensions(archived: bool) -> str:
    pairs = ["['agent', agent]", "['source', source]", "['confidence', bucket]", "['day', day]"]
    if archived:
        pairs.append("['archived', archived]")
    return "[" + ", ".join(pairs) + "]"


_TALLY = (
    "RETURN {part} AS {key}, d[0] AS dimension, d[1] AS value, sum(rows) AS count,\n"
    "       min(low) AS low, max(high) AS high, sum(total) AS total"
)


@functools.lru_cache(maxsize=16)
def node_tallies(labels: tuple[str, ...]) -> Statement | None:
    """Per label (`part`), dimension and value: how many nodes. Every node is in exactly one `archived` row, so
    those rows also count the label. None for no labels."""
    branches = [
        f"MATCH (n:{quote(label)}) WHERE {not_alias('n')}\n"
        f"{_grouped('n', archived=True)}\n"
        f"UNWIND {_dimensions(archived=True)} AS d\n" + _TALLY.format(part=part, key="part")
        for part, label in enumerate(labels)
    ]
    return Statement("\nUNION ALL\n".join(branches)) if branches else None


# Per type (`name`), dimension and value: how many relationships of the types of `$types`; `count` rows count
# each type. One scan of every relationship: on FalkorDB a `()-[r:T]->()` per type scans every node again (each
# type cost as much as the whole scan, with or without relationships of its own).
RELATIONSHIP_TALLIES = Statement(
    "MATCH ()-[r]->() WHERE type(r) IN $types\n"
    f"{_grouped('r', archived=False, typed=True)}\n"
    f"UNWIND [['count', null]] + {_dimensions(archived=False)} AS d\n" + _TALLY.format(part="name", key="name")
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

"""Read statement builders: pure, parameterised, and run read-only at the engine.

Pages are keyset-paginated on the engine's node id (`id(n) > $after ORDER BY id(n)`), so a walk
sees every node that exists throughout it exactly once.
"""

from collections.abc import Sequence

from write_gate.cypher import Statement
from write_gate.dialect import Dialect
from write_gate.identifiers import PROTECTED_FIELDS, RESERVED_LABELS, quote

# The gate's own bookkeeping nodes are never part of what agents read.
_NOT_BOOKKEEPING = " AND ".join(f"NOT n:{quote(label)}" for label in sorted(RESERVED_LABELS))


def _search_predicate(dialect: Dialect) -> str:
    """Case-insensitive substring on labels and on every string or string-list property the agents wrote
    (gate-computed provenance and `_` bookkeeping are not searched: "llm" would match every LLM write)."""
    value = "properties(n)[k]"
    items = f"CASE WHEN {dialect.is_list(value)} THEN {value} ELSE [{value}] END"
    return (
        "(any(l IN labels(n) WHERE toLower(l) CONTAINS $query)\n"
        "     OR any(k IN keys(n) WHERE NOT k IN $skip_keys AND NOT k STARTS WITH '_'\n"
        f"            AND any(x IN {items} WHERE {dialect.is_string('x')} AND toLower(x) CONTAINS $query)))"
    )


def page_of_ids(
    dialect: Dialect, *, after: int, limit: int, labels: Sequence[str] | None, query: str | None
) -> Statement:
    conditions = ["id(n) > $after", _NOT_BOOKKEEPING]
    params: dict = {"after": after, "limit": limit}
    if labels:
        conditions.append("any(l IN labels(n) WHERE l IN $labels)")
        params["labels"] = list(labels)
    if query is not None:
        # The cheap prefilter first (engines evaluate AND left to right and stop early), then the exact test.
        conditions.append("(n._search IS NULL OR n._search CONTAINS $query)")
        conditions.append(_search_predicate(dialect))
        params["query"] = query.lower()
        params["skip_keys"] = sorted(PROTECTED_FIELDS)
    text = "MATCH (n)\nWHERE " + "\n  AND ".join(conditions) + "\nRETURN id(n) AS id\nORDER BY id\nLIMIT $limit"
    return Statement(text, params)


def ids_by_name(labels: Sequence[str]) -> Statement | None:
    """Exact, case-sensitive `name` lookup in each registered label (each one an index seek)."""
    if not labels:
        return None
    branches = [
        f"MATCH (n:{quote(label)}) WHERE n.name IN $names RETURN id(n) AS id, n.name AS name, labels(n) AS labels"
        for label in labels
    ]
    return Statement("\nUNION ALL\n".join(branches), {})


EXPAND = Statement(
    "UNWIND $ids AS i\n"
    "MATCH (n) WHERE id(n) = i\n"
    "OPTIONAL MATCH (n)-[r]-(m)\n"
    "RETURN id(n) AS id, labels(n) AS labels, properties(n) AS props,\n"
    "       id(r) AS rid, type(r) AS rtype, id(startNode(r)) AS rstart, properties(r) AS rprops,\n"
    "       id(m) AS mid, labels(m) AS mlabels, properties(m) AS mprops"
)


def label_count(label: str) -> Statement:
    return Statement(f"MATCH (n:{quote(label)}) RETURN count(n) AS count")


def relationship_count(type_: str) -> Statement:
    return Statement(f"MATCH ()-[r:{quote(type_)}]->() RETURN count(r) AS count")

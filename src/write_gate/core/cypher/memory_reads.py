"""The memory profile's reads in one statement each (issue 28, item 5): a search's page and an open's look-up by
name, each with the found nodes' neighbours, where the shared reads take two statements (the page or the
look-up, then `reads.expand`). The rows are those of `reads.expand` (a node with none gives one row, rid null),
so `services.reads.shape` reads them alike, and each row says where its node stands in the page (`at`).

Every label is looked up in turn, its finds added to one list (an OPTIONAL MATCH per label, whose nulls collect
drops): a statement per label costs the engine more than the labels' lookups themselves. A search takes its
label's part of the page as `reads.page_of_labels` does (the text test, then `_key` order after `$after` in the
first label, `$limit` nodes), the labels in the page's order, so the page is the list's first nodes; `more`
says there are others after it. An open finds names as `reads.ids_by_name` does, aliases and archived nodes
included (the service follows an alias the shared way, and leaves an archived node out unless asked).
"""

import functools

from write_gate.core.cypher.aliases import ALIAS_LABEL, ALIAS_OF, not_alias
from write_gate.core.cypher.reads import not_archived
from write_gate.core.cypher.statement import Statement
from write_gate.core.identifiers import quote
from write_gate.core.identity import KEY_FIELD, SEARCH_FIELD
from write_gate.core.knowledge import ARCHIVED_AT


def _with_neighbours(found: str, also: str = "", carried: str = "") -> str:
    """After the list `found`: each node with at most `$per_node` of its relationships (in id order; to an archived
    node only with `$include_archived`), and `more` when it has others. `carried`: variables kept to the answer."""
    keep = "n, at" + (f", {carried}" if carried else "")
    return (
        f"UNWIND range(0, size({found}) - 1) AS at\n"
        f"WITH {found}[at] AS n, at{f', {carried}' if carried else ''}\n"
        f"OPTIONAL MATCH (n)-[r]-(o) WHERE $include_archived OR {not_archived('o')}\n"
        f"WITH {keep}, r ORDER BY id(r)\n"
        f"WITH {keep}, collect(r) AS rels\n"
        f"WITH {keep}, size(rels) > $per_node AS more, rels[0..$per_node] AS page\n"
        "UNWIND CASE WHEN size(page) = 0 THEN [null] ELSE page END AS r\n"
        f"WITH {keep}, more, r, CASE WHEN r IS NULL THEN null WHEN id(startNode(r)) = id(n) THEN endNode(r)"
        " ELSE startNode(r) END AS m\n"
        f"RETURN at, id(n) AS id, labels(n) AS labels, properties(n) AS props,{also} more,\n"
        "       id(r) AS rid, type(r) AS rtype, id(startNode(r)) AS rstart, properties(r) AS rprops,\n"
        f"       id(m) AS mid, m.name AS mname, m.{KEY_FIELD} AS mkey"
    )


def _gathered(lookups: list[tuple[str, str, str]]) -> list[str]:
    """`found`: every label's finds in turn, each (pattern, condition, order) an OPTIONAL MATCH added to it."""
    lines = ["WITH [] AS found"]
    for i, (pattern, condition, order) in enumerate(lookups):
        x = f"x{i}"
        lines += [
            f"OPTIONAL MATCH {pattern.format(x=x)} WHERE {condition.format(x=x)}",
            f"WITH found, {x}{order.format(x=x)}",
        ]
        # Grouped by `found`, then added: an aggregate inside an expression with a grouping key is not portable.
        lines += [f"WITH found, collect({x}) AS adding", "WITH found + adding AS found"]
    return lines


@functools.lru_cache(maxsize=64)
def search_with_neighbours(labels: tuple[str, ...], include_archived: bool) -> Statement | None:
    """`labels` in the page's order. Parameters: `query` (folded), `after` ('' for the first page: a cursor's
    `_key` in the first label), `limit` (the page's size) and `take` (one more, from each label), `per_node`,
    `include_archived`. Every row also says whether the search found more than the page (`next`)."""
    lookups = []
    for part, label in enumerate(labels):
        conditions = [f"{{x}}.{SEARCH_FIELD} CONTAINS $query", not_alias("{x}")]
        if part == 0:  # every `_key` sorts after '' (core.identity): only a cursor bounds it
            conditions.append(f"($after = '' OR {{x}}.{KEY_FIELD} > $after)")
        if not include_archived:
            conditions.append(not_archived("{x}"))
        lookups.append(
            (f"({{x}}:{quote(label)})", " AND ".join(conditions), f" ORDER BY {{x}}.{KEY_FIELD} LIMIT $take")
        )
    if not lookups:
        return None
    lines = [
        *_gathered(lookups),
        "WITH found[0..$limit] AS found, size(found) > $limit AS next",
        _with_neighbours("found", " next,", carried="next"),
    ]
    return Statement("\n".join(lines))


_FOUND = (
    f" n.name AS name, n.{ALIAS_LABEL} AS alias_label, n.{ALIAS_OF} AS alias_key,"
    f" n.{ARCHIVED_AT} IS NOT NULL AS archived,"
)


@functools.lru_cache(maxsize=64)
def open_with_neighbours(keyed_by_name: tuple[str, ...], other: tuple[str, ...]) -> Statement | None:
    """Exact names (by `_key` where a label is identified by `name` alone, by `name` elsewhere), each node found
    with its neighbours and where it leads if it is an alias. Parameters: `names`, `name_keys`, `per_node`,
    `include_archived`."""
    lookups = [(f"({{x}}:{quote(label)})", f"{{x}}.{KEY_FIELD} IN $name_keys", "") for label in keyed_by_name]
    lookups += [(f"({{x}}:{quote(label)})", "{x}.name IN $names", "") for label in other]
    if not lookups:
        return None
    return Statement("\n".join([*_gathered(lookups), _with_neighbours("found", _FOUND)]))

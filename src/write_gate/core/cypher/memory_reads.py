"""The memory profile's reads in one statement each (issue 28, item 5): a search's page and an open's look-up by
name, each with the found nodes' neighbours, where the shared reads take two statements (the page or the
look-up, then `reads.expand`). Every label is one branch of a UNION ALL (its place in the label list is the
`part` column), and each branch brings its nodes' relationships with it: the rows are those of `reads.expand`
(a node with none gives one row, rid null), so `services.reads.shape` reads them alike.

A search's branch is its label's part of the page (`reads.page_of_labels`: the text test first, then `_key` order
after `$after` in the first label, `$limit` nodes), so a page with several labels brings up to `$limit` nodes of
each, and the service keeps the page's own. An open's branch finds names as `reads.ids_by_name` does, aliases
and archived nodes included (the service follows an alias the shared way, and leaves an archived node out unless
asked), each with where it leads.
"""

import functools

from write_gate.core.cypher.aliases import ALIAS_LABEL, ALIAS_OF, not_alias
from write_gate.core.cypher.reads import not_archived
from write_gate.core.cypher.statement import Statement
from write_gate.core.identifiers import quote
from write_gate.core.identity import KEY_FIELD, SEARCH_FIELD
from write_gate.core.knowledge import ARCHIVED_AT


def _with_neighbours(part: int, also: str = "") -> str:
    """After a branch has its nodes `n`: each with at most `$per_node` of its relationships (in id order; to an
    archived node only with `$include_archived`), and `more` when it has others."""
    return (
        f"OPTIONAL MATCH (n)-[r]-(o) WHERE $include_archived OR {not_archived('o')}\n"
        "WITH n, r ORDER BY id(r)\n"
        "WITH n, collect(r) AS rels\n"
        "WITH n, size(rels) > $per_node AS more, rels[0..$per_node] AS page\n"
        "UNWIND CASE WHEN size(page) = 0 THEN [null] ELSE page END AS r\n"
        "WITH n, more, r, CASE WHEN r IS NULL THEN null WHEN id(startNode(r)) = id(n) THEN endNode(r)"
        " ELSE startNode(r) END AS m\n"
        f"RETURN {part} AS part, n.{KEY_FIELD} AS key, id(n) AS id, labels(n) AS labels, properties(n) AS props,{also}"
        " more,\n"
        "       id(r) AS rid, type(r) AS rtype, id(startNode(r)) AS rstart, properties(r) AS rprops,\n"
        f"       id(m) AS mid, m.name AS mname, m.{KEY_FIELD} AS mkey"
    )


@functools.lru_cache(maxsize=64)
def search_with_neighbours(labels: tuple[str, ...], include_archived: bool) -> Statement | None:
    """Parameters: `query` (folded), `after` ('' for the first page), `limit`, `per_node`, `include_archived`."""
    parts = []
    for part, label in enumerate(labels):
        conditions = [f"n.{KEY_FIELD} > " + ("$after" if part == 0 else "''"), not_alias("n")]
        if not include_archived:
            conditions.append(not_archived("n"))
        parts.append(
            f"MATCH (n:{quote(label)})\n"
            f"WITH n WHERE n.{SEARCH_FIELD} CONTAINS $query\n"
            f"WITH n WHERE {' AND '.join(conditions)}\n"
            f"WITH n ORDER BY n.{KEY_FIELD} LIMIT $limit\n" + _with_neighbours(part)
        )
    return Statement("\nUNION ALL\n".join(parts)) if parts else None


_FOUND = (
    f" n.name AS name, n.{ALIAS_LABEL} AS alias_label, n.{ALIAS_OF} AS alias_key,"
    f" n.{ARCHIVED_AT} IS NOT NULL AS archived,"
)


@functools.lru_cache(maxsize=64)
def open_with_neighbours(keyed_by_name: tuple[str, ...], other: tuple[str, ...]) -> Statement | None:
    """Exact names (by `_key` where a label is identified by `name` alone, by `name` elsewhere), each node found
    with its neighbours and where it leads if it is an alias. Parameters: `names`, `name_keys`, `per_node`,
    `include_archived`."""
    branches = [f"MATCH (n:{quote(label)}) WHERE n.{KEY_FIELD} IN $name_keys" for label in keyed_by_name]
    branches += [f"MATCH (n:{quote(label)}) WHERE n.name IN $names" for label in other]
    parts = [f"{found}\n{_with_neighbours(part, _FOUND)}" for part, found in enumerate(branches)]
    return Statement("\nUNION ALL\n".join(parts)) if parts else None

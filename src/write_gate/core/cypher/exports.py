"""Export statement builders: a walk of the graph that keeps every node's identity. Pure and read-only.

Nodes come label by label, each label keyset-paged in its engine's page order (engine id on FalkorDB, `_key` on
Memgraph: `core.cypher.reads.page_tail`), with the export's filters in the statement as parameters (a null one
passes everything); each page's outgoing relationships come with their endpoints' engine ids, so the export
names both ends by `label:_key` and never by a display name alone.
Aliases (merged-away nodes) are never exported; archived nodes only when asked.
"""

import functools

from write_gate.core.cypher.aliases import not_alias
from write_gate.core.cypher.reads import not_archived, page_tail, position_after
from write_gate.core.cypher.statement import Statement
from write_gate.core.identifiers import quote

# The filters' conditions: each parameter null means "no filter". Tags: any of `$tags` (already normalised); a
# `tags` written as one string (write_node takes any value) counts as one tag: `[] + x` is a list either way, where
# `t IN x` would fail the whole export on a string.
_FILTERS = (
    f"($include_archived OR {not_archived('n')})",
    "($start IS NULL OR n.last_updated >= $start)",
    "($end IS NULL OR n.last_updated <= $end)",
    "($min_confidence IS NULL OR n.confidence >= $min_confidence)",
    "($tags IS NULL OR any(t IN [] + coalesce(n.tags, []) WHERE t IN $tags))",
)


@functools.lru_cache(maxsize=64)
def export_page(label: str, by_id: bool = False, resume: bool = True) -> Statement:
    """Up to `$limit` nodes of `label` after position `$after` (engine id with `by_id`, else `_key`; from the
    first with `resume` false, see `core.cypher.reads`), in that order, with their labels and every property, and
    the position as `key`. Parameters: `after` (when resuming), `limit`, `include_archived`, `start`, `end`,
    `min_confidence`, `tags`."""
    bound = (position_after("n", by_id, "$after"),) if resume else ()
    conditions = " AND ".join((*bound, not_alias("n"), *_FILTERS))
    return Statement(
        f"MATCH (n:{quote(label)})\n"
        f"WHERE {conditions}\n"
        f"RETURN id(n) AS id, labels(n) AS labels, properties(n) AS props, {page_tail('n', by_id)}"
    )


# The outgoing relationships of the nodes of `ids`, each with both ends' engine ids (the export keeps those
# whose two ends it exports) and the far end's name (a parent's name, for parentId), in relationship id order.
EXPORT_RELATIONSHIPS = Statement(
    "UNWIND $ids AS i\n"
    "MATCH (n)-[r]->(m) WHERE id(n) = i\n"
    "RETURN id(r) AS rid, type(r) AS type, id(n) AS start, id(m) AS end, m.name AS end_name, properties(r) AS props\n"
    "ORDER BY rid"
)

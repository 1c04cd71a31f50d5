"""Read statement builders: pure, parameterised, and run read-only at the engine.

Pages are keyset-paginated per label: on FalkorDB by engine id (a scan in id order that stops at the page), on
Memgraph by the identity property `_key`, which every label indexes (an ordered range, where `id(n) > $after`
would scan every node of the label); so a walk sees every node that exists throughout it exactly once. Every
label's part of a page is asked for in one statement (a round trip costs more than the rows a label may answer
in vain).
Neighbours are bounded per node: a hub with 20,000 relationships answers a page of them, not all.
"""

import functools

from write_gate.core.claims import AGENT, AT, CLAIM_PREFIX, CONFIDENCE, SOURCE
from write_gate.core.cypher.aliases import ALIAS_LABEL, ALIAS_OF, not_alias
from write_gate.core.cypher.ranges import exactly
from write_gate.core.cypher.statement import Statement
from write_gate.core.identifiers import quote
from write_gate.core.identity import FOLD_PREFIX, KEY_FIELD, SEARCH_FIELD
from write_gate.core.knowledge import ARCHIVED_AT, IMPORTANCE, TAGS


def claim_matches(var: str) -> str:
    """True when one of the node's value claims (`core.claims`) matches every filter parameter given
    (`p_agent`, `p_source`, `p_min_confidence`, `p_since`; a null one matches any)."""
    c = f"properties({var})[k]"
    return (
        f"any(k IN keys({var}) WHERE k STARTS WITH '{CLAIM_PREFIX}'"
        f" AND ($p_agent IS NULL OR {c}[{AGENT}] = $p_agent)"
        f" AND ($p_source IS NULL OR {c}[{SOURCE}] = $p_source)"
        f" AND ($p_min_confidence IS NULL OR {c}[{CONFIDENCE}] >= $p_min_confidence)"
        f" AND ($p_since IS NULL OR {c}[{AT}] >= $p_since))"
    )


def not_archived(var: str) -> str:
    """Not in the archive (`core.cypher.archive`): what every read shows unless asked for archived ones too."""
    return f"{var}.{ARCHIVED_AT} IS NULL"


def knowledge_matches(var: str) -> str:
    """True when the node has one of the tags `$k_tags` (folded; null: any node) and an importance within
    `$k_min_importance` and `$k_max_importance` (null: no bound). `_f_tags` is a list whatever `tags` holds."""
    return (
        f"($k_tags IS NULL OR any(t IN coalesce({var}.{FOLD_PREFIX}{TAGS}, []) WHERE t IN $k_tags))"
        f" AND ($k_min_importance IS NULL OR {var}.{IMPORTANCE} >= $k_min_importance)"
        f" AND ($k_max_importance IS NULL OR {var}.{IMPORTANCE} <= $k_max_importance)"
    )


def entity_conditions(*, filtered: bool, knowledge: bool, include_archived: bool) -> list[str]:
    """What a node `n` of a read's page must be, in the order every read tests it: no alias, not archived unless
    asked, and matching the claim filter (`filtered`) and the knowledge filter (`knowledge`) when they are given."""
    conditions = [not_alias("n")]
    if not include_archived:
        conditions.append(not_archived("n"))
    if filtered:
        conditions.append(claim_matches("n"))
    if knowledge:
        conditions.append(knowledge_matches("n"))
    return conditions


def position_after(var: str, by_id: bool, after: str, own_scan: bool = False) -> str:
    """The page's lower bound on a node's position: its engine id (FalkorDB), or its `_key`, exactly. With
    `own_scan`, an id bound FalkorDB's planner keeps as a filter on the label's own scan (`toInteger` hides it from
    the rewrite into a scan by id): see `resume_by_own_scan`."""
    if by_id and own_scan:
        return f"toInteger(id({var})) > {after}"
    return f"id({var}) > {after}" if by_id else exactly(f"{var}.{KEY_FIELD}", ">", after)


def resume_by_own_scan(label_nodes: int, all_nodes: int, limit: int) -> bool:
    """Whether a page resumed inside a label reads it cheaper by the label's own scan, filtered past the cursor
    (which reads the label's nodes before the cursor: at most `label_nodes`), than by FalkorDB's scan by id (which
    walks every id past the cursor and tests its label: about `limit` x `all_nodes` / `label_nodes` of them for a
    label spread evenly). So a sparse label is read by its own nodes, a dense one by ids; either way a page reads
    at most about the square root of `limit` x `all_nodes` (one node among a million: 133 ms by id)."""
    return label_nodes * label_nodes < limit * all_nodes


def page_tail(var: str, by_id: bool) -> str:
    """The end of a label's page: its position as `key`, then the first `$limit` in position order. By id, the
    label's scan already runs in id order and stops at the limit, so there is nothing to sort (an ORDER BY would
    read and sort every node past the cursor)."""
    if by_id:
        return f"id({var}) AS key\nLIMIT $limit"
    return f"{var}.{KEY_FIELD} AS key\nORDER BY key\nLIMIT $limit"


def _from_start(by_id: bool) -> str | None:
    """A label read from its first node: by id, no bound at all. FalkorDB's scan of a label by id walks the ids
    from the bound and tests each one's label (a label of 1 node among a million took 133 ms), where its plain
    scan of the label walks the label's own nodes, in id order too: from the start, that reads the page alone."""
    return None if by_id else exactly(f"n.{KEY_FIELD}", ">", "''")


@functools.lru_cache(maxsize=64)
def page_of_labels(
    labels: tuple[str, ...],
    *,
    searching: bool,
    by_id: bool = False,
    resume: bool = True,
    filtered: bool = False,
    knowledge: bool = False,
    include_archived: bool = False,
    own_scan: bool = False,
) -> Statement | None:
    """A page across `labels` in one round trip: for each label in turn (its place in `labels` is the `part`
    column), its first `$limit` nodes in position order (engine id with `by_id`, else `_key`), after `$after` in
    the first label when `resume` (a cursor points into it) and from the start in the others. Parameters: `after`
    (when resuming), `limit`, `query` (folded) when searching, the claim filter's when `filtered`
    (`claim_matches`), the knowledge filter's when `knowledge` (`knowledge_matches`); archived nodes only with
    `include_archived`; the first label resumed by its own scan with `own_scan` (`resume_by_own_scan`). None for
    no labels."""
    parts = []
    for part, label in enumerate(labels):
        bound = position_after("n", by_id, "$after", own_scan) if part == 0 and resume else _from_start(by_id)
        conditions = [bound] if bound is not None else []
        conditions += entity_conditions(filtered=filtered, knowledge=knowledge, include_archived=include_archived)
        narrowed = ""
        if searching and by_id:
            conditions.insert(1 if bound is not None else 0, f"n.{SEARCH_FIELD} CONTAINS $query")
        elif searching:
            # A search tests its text first, on a label scan: that is what narrows it, where a `_key` range from
            # the start holds every node and FalkorDB's index scan of it costs three times the label scan (its
            # planner keeps to the label scan when the text test stands alone in a WITH of its own).
            narrowed = f"WITH n WHERE n.{SEARCH_FIELD} CONTAINS $query\nWITH n "
        parts.append(
            f"MATCH (n:{quote(label)})\n"
            f"{narrowed}WHERE {' AND '.join(conditions)}\n"
            f"RETURN {part} AS part, id(n) AS id, {page_tail('n', by_id)}"
        )
    return Statement("\nUNION ALL\n".join(parts)) if parts else None


def ids_by_name(keyed_by_name: list[str], other: list[str], *, displayed: bool = False) -> Statement | None:
    """Exact, case-sensitive names in every registered label: by `_key` (an index seek) where a label is
    identified by `name` alone, by `name` elsewhere; with where each leads if it is an alias (null if not),
    so following aliases costs no second look-up. Parameters: `names`, `name_keys` (their `_key`s). With
    `displayed`, also the nodes of the other labels whose `_key` is one of `$displayed_keys` (a node with no
    `name` is named by its merge keys, `title=Launch`: core.identity.keys_displayed_as)."""
    found = (
        "RETURN id(n) AS id, n.name AS name, labels(n) AS labels, "
        f"n.{ALIAS_LABEL} AS alias_label, n.{ALIAS_OF} AS alias_key, n.{KEY_FIELD} AS key"
    )
    branches = [f"MATCH (n:{quote(label)}) WHERE n.{KEY_FIELD} IN $name_keys {found}" for label in keyed_by_name]
    branches += [f"MATCH (n:{quote(label)}) WHERE n.name IN $names {found}" for label in other]
    if displayed:
        branches += [f"MATCH (n:{quote(label)}) WHERE n.{KEY_FIELD} IN $displayed_keys {found}" for label in other]
    return Statement("\nUNION ALL\n".join(branches)) if branches else None


_NODE = "id(n) AS id, labels(n) AS labels, properties(n) AS props"


@functools.lru_cache(maxsize=4)
def expand(outgoing_only: bool, *, neighbours: bool = False) -> Statement:
    """Each node of `ids` with at most `per_node` of its relationships after relationship id `after` (in id
    order; outgoing ones only for read_graph), each with the other end's name and `_key` (for naming it),
    and `more` when it has others beyond them. A node with none gives one row (rid null). Archived nodes, and
    relationships to them, only when `$include_archived`. With `neighbours`, the other end's labels and
    properties too (MemoryMesh's neighbour-inclusive reads), in the same round trip."""
    pattern = "(n)-[r]->(o)" if outgoing_only else "(n)-[r]-(o)"
    other = ", labels(m) AS mlabels, properties(m) AS mprops" if neighbours else ""
    # The other end's archive test is in the collect, not in the OPTIONAL MATCH: FalkorDB runs a filtered
    # optional traversal record by record, which cost an open of ten nodes 0.6 ms in the engine, against 0.3.
    # collect drops the nulls, so a node whose every relation leads to the archive still gives its one row.
    return Statement(
        "UNWIND $ids AS i\n"
        f"MATCH (n) WHERE id(n) = i AND ($include_archived OR {not_archived('n')})\n"
        f"OPTIONAL MATCH {pattern}\n"
        "WITH n, r, o ORDER BY id(r)\n"
        f"WITH n, [x IN collect(CASE WHEN $include_archived OR {not_archived('o')} THEN r END)"
        " WHERE id(x) > $after] AS rels\n"
        "WITH n, size(rels) > $per_node AS more, rels[0..$per_node] AS page\n"
        "UNWIND CASE WHEN size(page) = 0 THEN [null] ELSE page END AS r\n"
        "WITH n, more, r, CASE WHEN r IS NULL THEN null WHEN id(startNode(r)) = id(n) THEN endNode(r)"
        " ELSE startNode(r) END AS m\n"
        f"RETURN {_NODE}, more,\n"
        "       id(r) AS rid, type(r) AS rtype, id(startNode(r)) AS rstart, properties(r) AS rprops,\n"
        f"       id(m) AS mid, m.name AS mname, m.{KEY_FIELD} AS mkey{other}"
    )


# The nodes of `ids` whose claims match the filter parameters (`claim_matches`).
IDS_WITH_MATCHING_CLAIMS = Statement(
    f"UNWIND $ids AS i\nMATCH (n) WHERE id(n) = i AND {claim_matches('n')}\nRETURN id(n) AS id"
)


def label_count(label: str) -> Statement:
    return Statement(f"MATCH (n:{quote(label)}) RETURN count(n) AS count")


# Every node: like a label's count, answered by FalkorDB from its matrices without a scan (only in this bare form).
NODE_COUNT = Statement("MATCH (n) RETURN count(n) AS count")


def relationship_count(type_: str) -> Statement:
    return Statement(f"MATCH ()-[r:{quote(type_)}]->() RETURN count(r) AS count")


# The types of the relationships of the nodes of `ids` (a delete removes them too).
RELATIONSHIP_TYPES_OF = Statement(
    "UNWIND $ids AS i\nMATCH (n)-[r]-() WHERE id(n) = i\nRETURN DISTINCT type(r) AS type ORDER BY type"
)

"""Seed 004's hierarchy: one relationship (`CHILD_OF` by default) from a child to its parent, at most one per
child. Setting a parent is one statement: the cycle check, the old link's removal and the new link, with their
records, so two writers racing cannot make a cycle between them (FalkorDB runs a graph's writes one at a time).
The reads walk variable-length paths up to a depth given as a number (no engine takes a parameter for a bound):
one step more than asked, so an answer can say it was cut there."""

import functools

from write_gate.core.cypher.aliases import unless_alias
from write_gate.core.cypher.clauses import relationship_set
from write_gate.core.cypher.history_writes import append_changes, append_deleted_relationships
from write_gate.core.cypher.stat_counts import dropped, due
from write_gate.core.cypher.statement import Statement
from write_gate.core.identifiers import quote
from write_gate.core.identity import KEY_FIELD
from write_gate.core.knowledge import ARCHIVED_AT

_NODE = f"id(x) AS id, labels(x) AS labels, properties(x) AS props, x.{ARCHIVED_AT} IS NOT NULL AS archived"


@functools.lru_cache(maxsize=64)
def set_parent(type_: str, child_label: str, parent_label: str) -> Statement:
    """Replaces the child's links of `type_` with one to the parent, unless the parent is the child or one of its
    descendants (no row: nothing written; the caller reads why). Parameters: `child_key`, `parent_key`,
    `properties` and the provenance stamp (`relationship_set`), `changes` (the new link's records) and the
    change stamp's `change_id`, `at`, `agent` (the old links' records)."""
    t = quote(type_)
    return Statement(
        "\n".join(
            [
                f"MATCH (child:{quote(child_label)} {{{KEY_FIELD}: $child_key}})",
                f"MATCH (parent:{quote(parent_label)} {{{KEY_FIELD}: $parent_key}})",
                unless_alias("child", "parent"),
                "WITH child, parent WHERE id(child) <> id(parent)",
                f"OPTIONAL MATCH loop = (parent)-[:{t}*]->(child)",
                "WITH child, parent, count(loop) AS loops",
                "WHERE loops = 0",
                f"OPTIONAL MATCH (child)-[old:{t}]->()",
                "WITH child, parent, collect(old) AS old",
                append_deleted_relationships("old"),
                dropped("old"),
                "FOREACH (gone IN old | DELETE gone)",
                f"CREATE (child)-[r:{t}]->(parent)",
                relationship_set(False)
                + ",\n    r.weight = 1.0, r.created_at = $last_updated, r._rev = 1, r._seq = $at",
                # memory-mcp's parentId is the entity's: setting it modifies the entity (seed 004, lastModified),
                # which the statistics fold again (their newest and oldest entity).
                f"SET child.last_updated = $at, {due('child')}",
                append_changes(),
                "RETURN count(r) AS written",
            ]
        )
    )


def keeping_one_parent(child: str, parent: str, type_: str) -> list[str]:
    """Lines after which a statement linking `child` to `parent` by the hierarchy's type (a write through any tool,
    not set_entity_parent: it replaces the old link) goes on only where the link keeps the hierarchy a forest: not
    to itself, not to one of its descendants, and not beside a parent it has already (no row: nothing written;
    `breach` says why). For a statement of one write whose variables so far are `child` and `parent`."""
    t = quote(type_)
    return [
        _loop(parent, child, t),
        f"OPTIONAL MATCH ({child})-[hierarchy_other:{t}]->(hierarchy_up) WHERE id(hierarchy_up) <> id({parent})",
        f"WITH {child}, {parent}, count(hierarchy_loop) AS hierarchy_loops, count(hierarchy_other) AS hierarchy_others",
        f"WITH {child}, {parent} WHERE id({child}) <> id({parent}) AND hierarchy_loops = 0 AND hierarchy_others = 0",
    ]


def not_below(child: str, parent: str, type_: str, carried: list[str]) -> list[str]:
    """Lines after which a statement (its variables so far: `carried`) goes on only where `parent` is not one of
    `child`'s descendants by `type_`: a write that replaces the child's parent (a typed tool's relationship property
    of the hierarchy's type), whose one-parent rule is the replacement itself. `child` may be null (a node not yet
    made has no descendants)."""
    kept = ", ".join(carried)
    return [
        _loop(parent, child, quote(type_)),
        f"WITH {kept}, count(hierarchy_loop) AS hierarchy_loops",
        f"WITH {kept} WHERE hierarchy_loops = 0",
    ]


def _loop(parent: str, child: str, quoted_type: str) -> str:
    """The paths from `parent` up to `child` (`hierarchy_loop`): one is a cycle the link would close."""
    return f"OPTIONAL MATCH hierarchy_loop = ({parent})-[:{quoted_type}*]->({child})"


@functools.lru_cache(maxsize=64)
def breach(type_: str, child_label: str, parent_label: str) -> Statement:
    """Read-only: why a link from the child (`$child_key`) to the parent (`$parent_key`) would break the hierarchy:
    `cycle` (the parent is the child or one of its descendants) and `parents`, the keys of the parents it has
    already (none: it would not; both nodes must exist)."""
    t = quote(type_)
    return Statement(
        f"MATCH (child:{quote(child_label)} {{{KEY_FIELD}: $child_key}})\n"
        f"MATCH (parent:{quote(parent_label)} {{{KEY_FIELD}: $parent_key}})\n"
        f"OPTIONAL MATCH loop = (parent)-[:{t}*]->(child)\n"
        "WITH child, parent, count(loop) AS loops\n"
        f"OPTIONAL MATCH (child)-[:{t}]->(up) WHERE id(up) <> id(parent)\n"
        f"RETURN id(child) = id(parent) OR loops > 0 AS cycle, collect(up.{KEY_FIELD}) AS parents"
    )


@functools.lru_cache(maxsize=64)
def lineage(type_: str) -> Statement:
    """Read-only: the node `$id`'s parents and all its ancestors (ids), for a merge's check: a merge gives the
    survivor every merged node's links."""
    t = quote(type_)
    return Statement(
        f"MATCH (n) WHERE id(n) = $id\nOPTIONAL MATCH (n)-[:{t}]->(parent)\n"
        "WITH n, collect(DISTINCT id(parent)) AS parents\n"
        f"OPTIONAL MATCH (n)-[:{t}*]->(up)\nRETURN parents, collect(DISTINCT id(up)) AS ancestors"
    )


@functools.lru_cache(maxsize=64)
def remove_parent(type_: str, child_label: str) -> Statement:
    """Removes the child's links of `type_`, recorded. Parameters: `child_key` and the change stamp's."""
    return Statement(
        "\n".join(
            [
                f"MATCH (child:{quote(child_label)} {{{KEY_FIELD}: $child_key}})",
                f"OPTIONAL MATCH (child)-[old:{quote(type_)}]->()",
                "WITH child, collect(old) AS old",
                append_deleted_relationships("old"),
                dropped("old"),
                "FOREACH (gone IN old | DELETE gone)",
                f"SET child.last_updated = $at, {due('child')}",  # as set_parent's
                "RETURN size(old) AS removed",
            ]
        )
    )


@functools.lru_cache(maxsize=64)
def would_cycle(type_: str) -> Statement:
    """Read-only: whether the node `parent` is the node `child` or one of its descendants."""
    return Statement(
        f"MATCH (c) WHERE id(c) = $child\nMATCH (p) WHERE id(p) = $parent\n"
        f"OPTIONAL MATCH loop = (p)-[:{quote(type_)}*]->(c)\n"
        "WITH c, p, count(loop) AS loops\nRETURN id(c) = id(p) OR loops > 0 AS cycle"
    )


@functools.lru_cache(maxsize=64)
def parents(type_: str) -> Statement:
    """Read-only: the parents of the node `id` (one, unless written around the tools)."""
    return Statement(f"MATCH (c)-[:{quote(type_)}]->(x) WHERE id(c) = $id\nRETURN {_NODE}\nORDER BY id")


@functools.lru_cache(maxsize=64)
def parent_names(type_: str) -> Statement:
    """Read-only: the parents' names of the nodes `ids` (memory-mcp's `parentId` on a read's entities), a row a
    link, archived parents only with `include_archived`: one read for a page's entities, not one each."""
    return Statement(
        "UNWIND $ids AS i\n"
        # The node by id, then its link (WITH between): FalkorDB plans a scan of `x` when its filter is in the
        # same MATCH as the pattern.
        "MATCH (c) WHERE id(c) = i\nWITH c, i\n"
        f"MATCH (c)-[:{quote(type_)}]->(x) WHERE $include_archived OR x.{ARCHIVED_AT} IS NULL\n"
        "RETURN i AS id, id(x) AS parent, x.name AS name"
    )


@functools.lru_cache(maxsize=64)
def children(type_: str) -> Statement:
    """Read-only: the children of the node `id`."""
    return Statement(f"MATCH (x)-[:{quote(type_)}]->(p) WHERE id(p) = $id\nRETURN {_NODE}\nORDER BY id")


@functools.lru_cache(maxsize=64)
def ancestors(type_: str, depth: int) -> Statement:
    """Read-only: the ancestors of the node `id` up to `depth` + 1 steps, each with its distance."""
    return Statement(
        f"MATCH path = (c)-[:{quote(type_)}*1..{int(depth) + 1}]->(x) WHERE id(c) = $id\n"
        f"RETURN {_NODE}, length(path) AS depth\nORDER BY depth, id"
    )


@functools.lru_cache(maxsize=64)
def descendants(type_: str, depth: int) -> Statement:
    """Read-only: the descendants of the node `id` up to `depth` + 1 steps, each with the ids and names on its
    path from the node (for a depth-first order)."""
    return Statement(
        f"MATCH path = (x)-[:{quote(type_)}*1..{int(depth) + 1}]->(p) WHERE id(p) = $id\n"
        f"RETURN {_NODE}, length(path) AS depth,\n"
        "       [n IN nodes(path) | id(n)] AS path_ids, [n IN nodes(path) | n.name] AS path_names"
    )

"""Entity resolution's statements: the nodes find_duplicates reads, what a merge reads first, and the merge.

A merge is one statement: it re-points the merged node's relationships (both directions, one clause per type
and direction, folding repeats into the survivor's), copies what the survivor lacks, and marks the merged node
as the survivor's alias. It runs only if the merged node's relationships are exactly those read when it was
planned (ids and stamps), and the survivor still lacks each value it is to be given: otherwise it matches
nothing and the service plans again, so a write racing the merge is never lost. What the merge moved and what
went are recorded by the same statement (`$changes`, `core.merge_history`, built from that same plan).
"""

from collections.abc import Sequence

from write_gate.core.cypher.aliases import ALIAS_FOLD, ALIAS_LABEL, ALIAS_OF, not_alias
from write_gate.core.cypher.change_order import next_seq, set_seq
from write_gate.core.cypher.clauses import refresh_search_text
from write_gate.core.cypher.dialect import Dialect
from write_gate.core.cypher.embeddings import EMBEDDING_LABEL
from write_gate.core.cypher.reads import not_archived, position_after
from write_gate.core.cypher.records import append_records
from write_gate.core.cypher.stat_counts import dropped, due
from write_gate.core.cypher.statement import Statement
from write_gate.core.history import REVISION_FIELD
from write_gate.core.identifiers import CREATED_FIELD, quote, string_literal
from write_gate.core.identity import KEY_FIELD
from write_gate.core.merging import Group


def candidates(
    label: str, shared: Sequence[str], *, by_id: bool = False, resume: bool = True, content: bool = False
) -> Statement:
    """Read-only: a page of a label's nodes (aliases and archived ones skipped, as every read skips them) with their
    name and shared key properties, in its engine's page order (engine id or `_key`: `Dialect.pages_by_id`; a page
    by id is the label's own scan, which stops at the page, as `reads.page_of_labels` reads); with `content`, their
    observations and tags (memory-mcp's score weighs them) and `created_at` (its groups follow the graph's insertion
    order) too. Parameters: `after` (a `_key`, or by id an engine
    id when `resume`: a first page by id has no bound), `limit`."""
    values = "[" + ", ".join(f"n.{quote(p)}" for p in shared) + "]"
    bound = [position_after("n", by_id, "$after")] if resume or not by_id else []
    conditions = " AND ".join([*bound, not_alias("n"), not_archived("n")])
    order = "" if by_id else "ORDER BY key\n"
    extra = f", n.observations AS observations, n.tags AS tags, n.{CREATED_FIELD} AS created" if content else ""
    return Statement(
        f"MATCH (n:{quote(label)})\n"
        f"WHERE {conditions}\n"
        f"RETURN id(n) AS id, n.{KEY_FIELD} AS key, n.name AS name, {values} AS shared{extra}\n"
        f"{order}LIMIT $limit"
    )


def node_state(label: str) -> Statement:
    """Read-only: a node by identity, with its properties. Parameters: `key`."""
    return Statement(f"MATCH (n:{quote(label)} {{{KEY_FIELD}: $key}})\nRETURN id(n) AS id, properties(n) AS props")


# Read-only: the merged node's relationships, each with the survivor's of the same type and direction to the
# same other end (its twin), if any. Parameters: `merged_id`, `survivor_id`.
LINKS = Statement(
    "MATCH (m)-[r]-(x) WHERE id(m) = $merged_id\n"
    "OPTIONAL MATCH (s)-[q]-(x)\n"
    "WHERE id(s) = $survivor_id AND type(q) = type(r)"
    " AND (id(startNode(q)) = id(s)) = (id(startNode(r)) = id(m))\n"
    "RETURN DISTINCT id(r) AS id, type(r) AS type, id(startNode(r)) = id(m) AS outgoing, id(x) AS other,"
    " properties(r) AS props, properties(q) AS twin, labels(x)[0] AS other_label, x._key AS other_key"
)


def _fingerprint(var: str) -> str:
    return f"toString(id({var})) + '@' + coalesce({var}.last_updated, '')"


def fingerprint(rel_id: int, last_updated: str | None) -> str:
    """What the merge statement compares: the relationships it was planned on, each id with its stamp."""
    return f"{rel_id}@{last_updated or ''}"


def merge_into(
    survivor_label: str,
    merged_label: str,
    groups: Sequence[Group],
    fill: Sequence[str],
    dialect: Dialect,
    *,
    vectors: bool = False,
    combined: Sequence[str] = (),
) -> Statement:
    """The survivor is `kept` (`s` is taken: the search text's reduce uses it).

    Parameters: `survivor_key`, `merged_key`, `seen` (fingerprints), `fill_<i>` (a value per `fill` key),
    `combined_<i>` and `was_<i>` (per `combined` key: its new value, and the survivor's as planned on),
    `alias_text`, `survivor_label`, `last_updated`, `updated_by`, `changes` and `conflicts` (the records: a value
    both nodes hold differently stays the survivor's, the merged one held open). Returns one row
    (`survivor`), or none when the nodes are not as planned."""
    lacks = "".join(f" AND kept.{quote(k)} IS NULL" for k in fill)  # a value it gained since: plan again
    lacks += "".join(f" AND kept.{quote(k)} = $was_{i}" for i, k in enumerate(combined))  # or changed since
    lines = [
        f"MATCH (kept:{quote(survivor_label)} {{{KEY_FIELD}: $survivor_key}})",
        f"MATCH (m:{quote(merged_label)} {{{KEY_FIELD}: $merged_key}})",
        f"WHERE id(kept) <> id(m) AND {not_alias('kept')} AND {not_alias('m')}{lacks}",
        "OPTIONAL MATCH (m)-[seen]-()",
        "WITH kept, m, collect(DISTINCT seen) AS rels",
        # The merge's records sort after every change the two nodes and the merged one's relationships had.
        f"WITH kept, m, [r IN rels | {_fingerprint('r')}] AS seen,\n"
        f"     {next_seq(['kept', 'm'], '$last_updated', ['rels'])} AS seq",
        "WHERE size(seen) = size($seen) AND all(f IN seen WHERE f IN $seen)",
    ]
    for j, group in enumerate(groups):
        r, x, n = f"r{j}", f"x{j}", f"n{j}"
        arrow = ("-", "->") if group.outgoing else ("<-", "-")
        type_ = quote(group.type)
        lines += [
            f"MATCH (m){arrow[0]}[{r}:{type_}]{arrow[1]}({x}) WHERE id({x}) <> id(kept) AND id({x}) <> id(m)",
            f"MERGE (kept){arrow[0]}[{n}:{type_}]{arrow[1]}({x})",
        ]
        if group.keys:
            copies = ", ".join(f"{n}.{quote(k)} = coalesce({n}.{quote(k)}, {r}.{quote(k)})" for k in group.keys)
            lines.append(f"SET {copies}")
        # The moved relationship is counted again as what it is now; the one it left is counted out.
        lines += [f"SET {due(n)}", dropped(f"[{r}]"), f"DELETE {r}", f"WITH kept, m, seq, count(*) AS moved{j}"]
    # What is left are relationships between the two nodes (and loops): the survivor's loops now, dropped.
    lines += [
        "OPTIONAL MATCH (m)-[rest]-()",
        "WITH kept, m, seq, collect(DISTINCT rest) AS leftover",
        dropped("leftover"),
        "FOREACH (d IN leftover | DELETE d)",
    ]
    if vectors:  # the merged node is an alias now: no search finds it, and its vectors go (embeddings on)
        lines += [
            "WITH kept, m, seq",
            f"OPTIONAL MATCH (o:{EMBEDDING_LABEL} {{key: m.{KEY_FIELD}, label: {string_literal(merged_label)}}})",
            "WITH kept, m, seq, collect(o) AS vectors",
            "FOREACH (o IN vectors | DELETE o)",
        ]
    sets = [f"kept.{quote(k)} = coalesce(kept.{quote(k)}, $fill_{i})" for i, k in enumerate(fill)]
    sets += [f"kept.{quote(k)} = $combined_{i}" for i, k in enumerate(combined)]
    sets += [
        f"kept.{ALIAS_FOLD} = coalesce(kept.{ALIAS_FOLD}, []) + $alias_text",
        "kept._stub = CASE WHEN m._stub IS NULL THEN null ELSE kept._stub END",
        "kept.last_updated = $last_updated, kept.updated_by = $updated_by",
        # A write decided on the survivor before the merge must decide again (core/cypher/records.py's guard).
        f"kept.{REVISION_FIELD} = coalesce(kept.{REVISION_FIELD}, 0) + 1, {set_seq('kept')}, {set_seq('m')}",
        f"m.{ALIAS_OF} = kept.{KEY_FIELD}, m.{ALIAS_LABEL} = $survivor_label, {due('m')}, {due('kept')}",
        "m.last_updated = $last_updated, m.updated_by = $updated_by",
    ]
    lines += [
        "SET " + ",\n    ".join(sets),
        refresh_search_text("kept", dialect, "kept, seq"),
        *append_records(),
        f"RETURN kept.{KEY_FIELD} AS survivor",
    ]
    return Statement("\n".join(lines))

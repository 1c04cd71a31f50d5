"""The statements of the statistics the writes keep (core/stat_counts.py says how they work).

What the writes add: `due(var)` in the SET of every write that can change what a subject counts as (the
provenance stamp carries it, so every stamped write does), and `dropped(list)` before every delete of entities or
relationships. What the fold runs: a read of a label's (or type's) due subjects from the `_due` index, a chunk
at a time, and one statement applying the chunk whole or not at all: each subject is taken only if it is as the
read saw it (its signature), so a write landing between the two leaves the chunk to be read again.
"""

from write_gate.core.cypher.aliases import ALIAS_OF
from write_gate.core.cypher.statement import Statement
from write_gate.core.cypher.statistics import confidence_bucket
from write_gate.core.identifiers import CREATED_FIELD, quote
from write_gate.core.identity import KEY_FIELD
from write_gate.core.knowledge import ARCHIVED_AT
from write_gate.core.stat_counts import DUE, META_KEY, STAT, STAT_LABELS

COUNTER_LABEL, END_LABEL, DROP_LABEL, META_LABEL, TALLY_LABEL = STAT_LABELS


# The fold sets `_due` to 0 and a stat of nothing to '', and no statement here removes a property: FalkorDB 4.16,
# removing two properties of a node in one SET, removed a third one instead (an alias lost `_alias_label`).
def due(var: str) -> str:
    """For a SET: the subject is folded again."""
    return f"{var}.{DUE} = 1"


def dropped(list_expr: str) -> str:
    """Before deleting the nodes or relationships of a list: each one counted leaves what it counted as."""
    return (
        f"FOREACH (_sx IN [_sx IN {list_expr} WHERE coalesce(_sx.{STAT}, '') <> ''] |"
        f" CREATE (:{DROP_LABEL} {{s: _sx.{STAT}}}))"
    )


_FIELDS = (
    "written_by",
    "source",
    "confidence",
    CREATED_FIELD,
    "last_updated",
    ARCHIVED_AT,
    ALIAS_OF,
    KEY_FIELD,
    "name",
)


def _signature(var: str) -> str:
    """Every field a subject's count reads, as text (null told apart from any value): equal signatures, equal
    counts."""
    return (
        "["
        + ", ".join(f"CASE WHEN {var}.{f} IS NULL THEN '' ELSE 'v' + toString({var}.{f}) END" for f in _FIELDS)
        + "]"
    )


def _read(var: str) -> str:
    return (
        f"RETURN id({var}) AS id, {var}.{STAT} AS old, {_signature(var)} AS sig, {var}.written_by AS agent,"
        f" {var}.source AS source, {var}.confidence AS confidence, {var}.{CREATED_FIELD} AS created,"
        f" {var}.last_updated AS updated"
    )


def due_nodes(label: str) -> Statement:
    """Read-only: up to `$chunk` of the label's due nodes, with what they count as now."""
    return Statement(
        f"MATCH (n:{quote(label)}) WHERE n.{DUE} = 1\nWITH n LIMIT $chunk\n"
        + _read("n")
        + f", n.{ARCHIVED_AT} IS NOT NULL AS archived, n.{ALIAS_OF} IS NULL AS entity, n.{KEY_FIELD} AS key,"
        " n.name AS name, labels(n) AS labels"
    )


def due_relationships(type_: str) -> Statement:
    """Read-only: up to `$chunk` of the type's due relationships (with their start node's id, to find each again
    by: FalkorDB finds a relationship by id only by scanning them all)."""
    return Statement(
        f"MATCH (a)-[r:{quote(type_)}]->() WHERE r.{DUE} = 1\nWITH a, r LIMIT $chunk\n"
        + _read("r")
        + ", id(a) AS start"
    )


DROPS = Statement(f"MATCH (t:{DROP_LABEL})\nWITH t LIMIT $chunk\nRETURN id(t) AS id, t.s AS old")


def _extreme(side: str, past: str) -> str:
    """A confidence counter's `side` ('low' or 'high') after a delta `d` (its added values' extreme `d.low` and how
    many hold it, `d.low_n`; the values `d.removed`), as map entries: the value, how many counted subjects hold
    it, and whether it is unknown. An added value past it, or a bucket that held nothing else, makes it exact; the
    last holder leaving (or a value past it leaving: it was unknown) makes it stale."""
    c, d = f"c.{side}", f"d.{side}"
    fresh = "(c.count - size(d.removed) <= 0)"
    wins = f"({d} IS NOT NULL AND ({c} IS NULL OR {fresh} OR {d} {past} {c}))"
    tie = f"({d} IS NOT NULL AND {d} = {c})"
    left = f"(c.at_{side} - size([x IN d.removed WHERE x = {c}]) + CASE WHEN {tie} THEN d.{side}_n ELSE 0 END)"
    beyond = f"coalesce(any(x IN d.removed WHERE x {past} {c}), false)"
    return (
        f"{side}: CASE WHEN {wins} THEN {d} ELSE {c} END, at_{side}: CASE WHEN {wins} THEN d.{side}_n ELSE {left} END,"
        f" {side}_stale: CASE WHEN {wins} THEN false"
        f" ELSE c.{side}_stale OR {beyond} OR ({c} IS NOT NULL AND {left} <= 0) END"
    )


def _apply(whole: str) -> list[str]:
    """The counters' and ends' changes (`$deltas`, `$ends`), when `whole` holds."""
    delta = (
        f"FOREACH (d IN CASE WHEN {whole} THEN $deltas ELSE [] END |\n"
        f"  MERGE (c:{COUNTER_LABEL} {{k: d.k}})\n"
        "  ON CREATE SET c.kind = d.kind, c.part = d.part, c.dim = d.dim, c.value = d.value,"
        " c.count = 0, c.total = 0, c.at_low = 0, c.at_high = 0, c.low_stale = false, c.high_stale = false\n"
        # A confidence counter's extremes: every new figure computed from the old ones first (one map), then set,
        # before the count they read changes.
        f"  FOREACH (v IN CASE WHEN d.dim = 'confidence' THEN [{{{_extreme('low', '<')}, {_extreme('high', '>')}}}]"
        " ELSE [] END |\n"
        "    SET c.low = v.low, c.at_low = v.at_low, c.low_stale = v.low_stale,"
        " c.high = v.high, c.at_high = v.at_high, c.high_stale = v.high_stale)\n"
        "  SET c.count = c.count + d.count, c.total = c.total + d.total)"
    )
    beats = (
        "CASE e.end WHEN 'newest' THEN e.at > x.at OR (e.at = x.at AND e.key > x.key)"
        " ELSE e.at < x.at OR (e.at = x.at AND e.key < x.key) END"
    )
    better = f"(e.at IS NOT NULL AND (x.at IS NULL OR {beats} OR (e.at = x.at AND e.key = x.key)))"
    lost = "(x.at IS NOT NULL AND any(r IN e.removed WHERE r[0] = x.at AND r[1] = x.key))"
    end = (
        f"FOREACH (e IN CASE WHEN {whole} THEN $ends ELSE [] END |\n"
        f"  MERGE (x:{END_LABEL} {{k: e.k}})\n"
        "  ON CREATE SET x.part = e.part, x.end = e.end\n"
        # An arrival at or past the end replaces it (and is exact: it passes all that was there); the end leaving
        # with nothing past it makes it unknown.
        f"  SET x.stale = CASE WHEN {better} THEN false ELSE coalesce(x.stale, false) OR {lost} END,\n"
        f"      x.entity_name = CASE WHEN {better} THEN e.name ELSE x.entity_name END,\n"
        f"      x.key = CASE WHEN {better} THEN e.key ELSE x.key END,\n"
        f"      x.at = CASE WHEN {better} THEN e.at ELSE x.at END)"
    )
    return [delta, end]


def _fold(found: str) -> Statement:
    """`$items` ([{id, sig, stat}], `start` for a relationship; `stat` '' for none): each subject set to what it
    counts as now, and out of the due index, with the counters changed, only if every one is still as read;
    answers `whole`."""
    return Statement(
        "\n".join(
            [
                found,
                # `stat` is '' for a subject that counts as nothing: collect() leaves nulls out.
                "WITH collect(s) AS subjects, collect(it.stat) AS stats",
                "WITH subjects, stats, size(subjects) = size($items) AS whole",
                "FOREACH (i IN CASE WHEN whole THEN range(0, size(subjects) - 1) ELSE [] END |\n"
                f"  FOREACH (s IN [subjects[i]] | SET s.{STAT} = stats[i], s.{DUE} = 0))",
                *_apply("whole"),
                "RETURN whole",
            ]
        )
    )


FOLD_NODES = _fold(
    "UNWIND $items AS it\nWITH it, it.id AS sid\n"
    f"MATCH (s) WHERE id(s) = sid AND s.{DUE} = 1 AND {_signature('s')} = it.sig"
)
FOLD_RELATIONSHIPS = _fold(
    "UNWIND $items AS it\nWITH it, it.start AS aid, it.id AS sid\n"
    f"MATCH (a)-[s]->() WHERE id(a) = aid AND id(s) = sid AND s.{DUE} = 1 AND {_signature('s')} = it.sig"
)
FOLD_DROPS = Statement(
    "\n".join(
        [
            f"UNWIND $ids AS tid\nMATCH (t:{DROP_LABEL}) WHERE id(t) = tid",
            "WITH collect(t) AS gone\nWITH gone, size(gone) = size($ids) AS whole",
            "FOREACH (t IN CASE WHEN whole THEN gone ELSE [] END | DELETE t)",
            *_apply("whole"),
            "RETURN whole",
        ]
    )
)

COUNTERS = Statement(
    f"MATCH (c:{COUNTER_LABEL}) WHERE c.count <> 0\n"
    "RETURN c.k AS k, c.kind AS kind, c.part AS part, c.dim AS dim, c.value AS value, c.count AS count,"
    " c.total AS total, c.low AS low, c.high AS high, c.low_stale OR c.high_stale AS stale"
)
ENDS = Statement(
    f"MATCH (x:{END_LABEL})\nRETURN x.k AS k, x.part AS part, x.end AS end, x.at AS at, x.key AS key,"
    " x.entity_name AS name, x.stale AS stale"
)


def _counted(var: str) -> str:
    """A subject counted as it is now: folded, and not changed since."""
    return f"{var}.{STAT} <> '' AND {var}.{DUE} = 0"


def bucket_extremes(label: str, relationship: bool) -> Statement:
    """Read-only: the least and greatest confidence in bucket `$bucket` of a label's entities (or a type's
    relationships) as counted: a stale counter's extremes, computed again."""
    match = f"MATCH ()-[v:{quote(label)}]->()" if relationship else f"MATCH (v:{quote(label)})"
    return Statement(
        f"{match} WHERE {_counted('v')} AND {confidence_bucket('v')} = $bucket\n"
        "WITH collect(v.confidence) AS values\n"
        "WITH values, reduce(m = null, x IN values | CASE WHEN m IS NULL OR x < m THEN x ELSE m END) AS low,\n"
        "     reduce(m = null, x IN values | CASE WHEN m IS NULL OR x > m THEN x ELSE m END) AS high\n"
        "RETURN low, size([x IN values WHERE x = low]) AS at_low, high, size([x IN values WHERE x = high]) AS at_high"
    )


SET_EXTREMES = Statement(
    f"MATCH (c:{COUNTER_LABEL} {{k: $k}})\n"
    "SET c.low = $low, c.at_low = $at_low, c.low_stale = false, c.high = $high, c.at_high = $at_high,"
    " c.high_stale = false"
)


def label_end(label: str, newest: bool) -> Statement:
    """Read-only: the label's least (or most) recently updated entity as counted: a stale end, computed again."""
    order = "DESC" if newest else "ASC"
    return Statement(
        f"MATCH (n:{quote(label)}) WHERE {_counted('n')} AND n.{ALIAS_OF} IS NULL AND n.last_updated IS NOT NULL\n"
        f"WITH n ORDER BY n.last_updated {order}, n.{KEY_FIELD} {order} LIMIT 1\n"
        f"RETURN n.last_updated AS at, n.{KEY_FIELD} AS key, n.name AS name"
    )


SET_END = Statement(
    f"MATCH (x:{END_LABEL} {{k: $k}}) WHERE x.stale\n"
    "SET x.at = $at, x.key = $key, x.entity_name = $name, x.stale = false"
)

# --- the first count of a graph written before the writes kept one -------------------------------------------

READY = Statement(f"MATCH (m:{META_LABEL}) RETURN m.ready AS ready, m.cursor AS cursor")


# Up to `$limit` nodes after engine id `$cursor` (an id walk: each page costs its page): those of the
# registry's labels (`$labels`), and their outgoing relationships of its types (`$types`), made due. Answers the
# page's last id (null: nothing was left) and its size: a page short of `$limit` held every node left.
MARK_DUE = Statement(
    "MATCH (n) WHERE id(n) > $cursor WITH n LIMIT $limit\n"
    "WITH collect(n) AS page\n"
    f"FOREACH (n IN [n IN page WHERE any(l IN labels(n) WHERE l IN $labels)] | SET n.{DUE} = 1)\n"
    "WITH page, size(page) AS walked,\n"
    "     reduce(m = null, n IN page | CASE WHEN m IS NULL OR id(n) > m THEN id(n) ELSE m END) AS last\n"
    "UNWIND (CASE WHEN walked = 0 THEN [null] ELSE page END) AS n\n"
    "OPTIONAL MATCH (n)-[r]->() WHERE type(r) IN $types\n"
    "WITH last, walked, collect(r) AS rels\n"
    f"FOREACH (r IN rels | SET r.{DUE} = 1)\n"
    "RETURN last, walked"
)


# Where the walk is (`$cursor`, null once over) and whether it is over (`$ready`).
WALKED = Statement(f"MERGE (m:{META_LABEL} {{k: '{META_KEY}'}})\nSET m.cursor = $cursor, m.ready = $ready")


def forget(label: str) -> Statement:
    """The statistics' nodes of one of STAT_LABELS, gone: a restored graph is counted afresh by a walk."""
    return Statement(f"MATCH (s:{quote(label)}) DELETE s")

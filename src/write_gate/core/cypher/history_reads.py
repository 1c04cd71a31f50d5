"""Read-only statements over the change and conflict records (`core.history`), newest first, keyset-paged.

Optional filters are parameters that may be null (no filter), so each tool has one statement text. Changes sort
by (`seq`, `change_id`): a subject's order (core/cypher/change_order.py); a record written before `seq` existed
sorts by its `at`. A page of changes is a page of values: a record of the one-per-write form holds several
(`core.history.value_changes` splits it), so the statement answers the records from the cursor's own on
(`after_seq`, `after_id`; a record of the one-value form strictly after `after_property` there) and the service
cuts the page. Conflicts page by (`at`, `conflict_id`).
"""

from write_gate.core.cypher.ranges import exactly, past_index
from write_gate.core.cypher.statement import Statement
from write_gate.core.feed_windows import SEQ_NUMBER
from write_gate.core.history import CHANGE_LABEL, CONFLICT_LABEL, PROPERTIES

_NODE = "h.subject = 'node' AND h.label = $label AND h.key = $key"
_RELATIONSHIP = (
    "h.subject = 'relationship' AND h.label = $label AND h.from_label = $from_label AND h.from_key = $from_key"
    " AND h.to_label = $to_label AND h.to_key = $to_key"
)


_SEQ = "coalesce(h.seq, h.at)"
# The cursor's change id, compared past its index (migration 0019): the subject's key is the read's index, and
# FalkorDB's string range over every change id would read the history past the cursor.
_CHANGE_ID = past_index("h.change_id")


def changes_of(relationship: bool) -> Statement:
    """Parameters: `label` and `key` (a node) or `label` (the type), `from_label`, `from_key`, `to_label`,
    `to_key` (a relationship); `property`, `since` (ISO text), `after_seq`, `after_id`, `after_property` (the
    cursor's), each null for none; `limit` (records)."""
    return Statement(
        f"MATCH (h:{CHANGE_LABEL})\n"
        f"WHERE {_RELATIONSHIP if relationship else _NODE}\n"
        f"  AND ($property IS NULL OR h.property = $property OR $property IN coalesce(h.{PROPERTIES}, []))\n"
        f"  AND ($since IS NULL OR {exactly('h.at', '>=', '$since')})\n"
        f"  AND ($after_seq IS NULL OR {_SEQ} < $after_seq OR ({_SEQ} = $after_seq AND ({_CHANGE_ID} < $after_id"
        f" OR ({_CHANGE_ID} = $after_id AND (h.{PROPERTIES} IS NOT NULL OR h.property < $after_property)))))\n"
        f"RETURN properties(h) AS change, {_SEQ} AS seq, h.change_id AS change_id,"
        " coalesce(h.property, '') AS property\n"
        "ORDER BY seq DESC, change_id DESC, property DESC\n"
        "LIMIT $limit"
    )


_CONFLICT_FILTERS = (
    "($status IS NULL OR c.status = $status)\n"
    "  AND ($label IS NULL OR c.label = $label)\n"
    "  AND ($property IS NULL OR c.property = $property)"
)
# The window (core/feed_windows.py): a range of the numeric `seq_n` (the conflict's `at` as a number), both bounds
# given; the cursor's bounds on text are tested past the index (`+ ''`), so FalkorDB's planner takes the window.
_CONFLICT_WINDOW = f"c.{SEQ_NUMBER} >= $low AND c.{SEQ_NUMBER} <= $high"

# What a page would read: up to `$cap` of the window's conflicts' numbers, through the filters.
CONFLICT_PROBE = Statement(
    f"MATCH (c:{CONFLICT_LABEL})\nWHERE {_CONFLICT_WINDOW} AND {_CONFLICT_FILTERS}\n"
    f"RETURN c.{SEQ_NUMBER} AS n\nLIMIT $cap"
)

# Newest first. Parameters: `status`, `label`, `property`, `after_at`, `after_id` (each null for none); `low`,
# `high` (the window: every conflict older than the cursor down to the page's last lies in it); `limit`.
CONFLICTS = Statement(
    f"MATCH (c:{CONFLICT_LABEL})\n"
    f"WHERE {_CONFLICT_WINDOW} AND {_CONFLICT_FILTERS}\n"
    "  AND ($after_at IS NULL OR c.at + '' < $after_at"
    " OR (c.at + '' = $after_at AND c.conflict_id + '' < $after_id))\n"
    "RETURN properties(c) AS conflict, c.at AS at, c.conflict_id AS conflict_id\n"
    "ORDER BY at DESC, conflict_id DESC\n"
    "LIMIT $limit"
)

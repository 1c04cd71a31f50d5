"""Read-only statements of the change feed (`changes_since`, the change resources, the change watcher), over
the change records (`core.history`) in the feed's order: oldest first by (`at`, `change_id`).

A change's records share its `at` and `change_id`, so a page holds whole changes: the first stage picks the
changes (distinct pairs), the second fetches their records through the `at` index. Optional filters are
parameters that may be null (no filter), so each statement has one text.
"""

from write_gate.core.cypher.statement import Statement
from write_gate.core.history import CHANGE_LABEL

_IN_AREA = "($labels IS NULL OR h.label IN $labels)"
# The picked changes' records, found through the `at` index by the picked range: a batch's items share one `at`,
# so a lookup per change would read the whole batch once per item.
_RECORDS = (
    "WITH collect(change_id) AS ids, min(at) AS low, max(at) AS high\n"
    f"MATCH (r:{CHANGE_LABEL}) WHERE r.at >= low AND r.at <= high AND r.change_id IN ids"
    " AND ($labels IS NULL OR r.label IN $labels)\n"
    "WITH r.at AS at, r.change_id AS change_id, collect(properties(r)) AS records\n"
    "RETURN at, change_id, records\n"
)

# Parameters: `labels` (node labels or relationship types; null: all); `after_at`, `after_id` (the cursor's;
# both "" for the oldest kept record: a range on the `at` index, never null); `horizon` (ISO text: nothing
# stamped later is answered yet); `limit` (changes, not records).
CHANGES_AFTER = Statement(
    f"MATCH (h:{CHANGE_LABEL})\n"
    f"WHERE h.at >= $after_at AND h.at <= $horizon AND {_IN_AREA}\n"
    "  AND (h.at > $after_at OR h.change_id > $after_id)\n"
    "WITH DISTINCT h.at AS at, h.change_id AS change_id\n"
    "ORDER BY at, change_id\n"
    "LIMIT $limit\n" + _RECORDS + "ORDER BY at, change_id"
)

# The newest `limit` changes (in the feed's order), for a change resource's read. Parameters: `labels`, `limit`.
LATEST_CHANGES = Statement(
    f"MATCH (h:{CHANGE_LABEL})\n"
    f"WHERE {_IN_AREA}\n"
    "WITH DISTINCT h.at AS at, h.change_id AS change_id\n"
    "ORDER BY at DESC, change_id DESC\n"
    "LIMIT $limit\n" + _RECORDS + "ORDER BY at, change_id"
)

# What changed where, stamped at or after `since` (ISO text), oldest first: the watcher's poll. `limit` bounds
# one answer; the watcher asks again from the last `at` it got when an answer is full.
CHANGED_AREAS = Statement(
    f"MATCH (h:{CHANGE_LABEL})\n"
    "WHERE h.at >= $since\n"
    "WITH DISTINCT h.at AS at, h.change_id AS change_id, h.label AS label\n"
    "RETURN at, change_id, label\n"
    "ORDER BY at, change_id\n"
    "LIMIT $limit"
)

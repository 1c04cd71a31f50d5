"""Read-only statements of the change feed (`changes_since`, the change resources, the change watcher), over
the change records (`core.history`) in the feed's order: oldest first by (`seq`, `change_id`), so every
subject's changes come in the order they were made (core/cypher/change_order.py).

The records of one change to one subject share its `seq` and `change_id` (a change to several subjects by one
statement, a cascading delete say, may give each subject its own `seq`), so a page holds whole changes: the
first stage picks the (`seq`, `change_id`) pairs, the second fetches exactly their records through the `seq`
index. Optional filters are parameters that may be null (no filter), so each statement has one text.
"""

from write_gate.core.cypher.ranges import exactly
from write_gate.core.cypher.statement import Statement
from write_gate.core.history import CHANGE_LABEL

_IN_AREA = "($labels IS NULL OR h.label IN $labels)"
# The picked changes' records, found through the `seq` index by the picked range: a batch's items may share one
# `seq`, so a lookup per change would read the whole batch once per item.
_RECORDS = (
    "WITH collect(seq + ' ' + change_id) AS picked, min(seq) AS low, max(seq) AS high\n"
    f"MATCH (r:{CHANGE_LABEL}) WHERE {exactly('r.seq', '>=', 'low')} AND {exactly('r.seq', '<=', 'high')}"
    " AND (r.seq + ' ' + r.change_id) IN picked AND ($labels IS NULL OR r.label IN $labels)\n"
    "WITH r.seq AS seq, r.change_id AS change_id, r.at AS at, collect(properties(r)) AS records\n"
    "RETURN seq, change_id, at, records\n"
)

# Parameters: `labels` (node labels or relationship types; null: all); `after_seq`, `after_id` (the cursor's;
# both "" for the oldest kept record: a range on the `seq` index, never null); `horizon` (ISO text: nothing
# ordered later is answered yet, exactly: core/cypher/ranges.py); `limit` (changes, not records).
CHANGES_AFTER = Statement(
    f"MATCH (h:{CHANGE_LABEL})\n"
    f"WHERE {exactly('h.seq', '>=', '$after_seq')} AND {exactly('h.seq', '<=', '$horizon')} AND {_IN_AREA}\n"
    f"  AND ({exactly('h.seq', '>', '$after_seq')} OR h.change_id > $after_id)\n"
    "WITH DISTINCT h.seq AS seq, h.change_id AS change_id\n"
    "ORDER BY seq, change_id\n"
    "LIMIT $limit\n" + _RECORDS + "ORDER BY seq, change_id"
)

# The newest `limit` changes (in the feed's order), for a change resource's read. Parameters: `labels`, `limit`.
LATEST_CHANGES = Statement(
    f"MATCH (h:{CHANGE_LABEL})\n"
    f"WHERE {_IN_AREA}\n"
    "WITH DISTINCT h.seq AS seq, h.change_id AS change_id\n"
    "ORDER BY seq DESC, change_id DESC\n"
    "LIMIT $limit\n" + _RECORDS + "ORDER BY seq, change_id"
)

# What changed where, stamped at or after `since` (ISO text), oldest first: the watcher's poll. `limit` bounds
# one answer; the watcher asks again from the last `at` it got when an answer is full.
CHANGED_AREAS = Statement(
    f"MATCH (h:{CHANGE_LABEL})\n"
    f"WHERE {exactly('h.at', '>=', '$since')}\n"
    "WITH DISTINCT h.at AS at, h.change_id AS change_id, h.label AS label\n"
    "RETURN at, change_id, label\n"
    "ORDER BY at, change_id\n"
    "LIMIT $limit"
)

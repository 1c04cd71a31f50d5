"""Read-only statements of the change feed (`changes_since`, the change resources, the change watcher), over
the change records (`core.history`) in the feed's order: oldest first by (`seq`, `seq_k`, `change_id`), so every
subject's changes come in the order they were made (core/cypher/change_order.py), and a batch's in the order of
its items (core/feed_windows.py).

The records of one change to one subject share its `seq`, `seq_k` and `change_id` (a change to several subjects
by one statement, a cascading delete say, may give each subject its own `seq`), so a page holds whole changes:
the first stage picks the (`seq`, `seq_k`, `change_id`) triples from one window of the `seq_n` index
(core/feed_windows.py), or of one millisecond's `seq_k`s (`keyed`), which the caller plans with the probe; the
second fetches exactly their records, by the `change_id` index. Optional filters are parameters that may be null
(no filter), so each statement has one text.
"""

from write_gate.core.cypher.ranges import past_index
from write_gate.core.cypher.statement import Statement
from write_gate.core.feed_windows import SEQ_KEY, SEQ_KEY_INDEXED, SEQ_NUMBER, seq_number
from write_gate.core.history import CHANGE_LABEL

_IN_AREA = "($labels IS NULL OR h.label IN $labels)"
# The window (core/feed_windows.py): a range of the numeric `seq_n` index, both bounds given. The feed's own
# bounds on `seq` are tested past the index (`+ ''`): FalkorDB's planner then has only the numeric range to take,
# and it reads the window alone.
_WINDOW = f"h.{SEQ_NUMBER} >= $low AND h.{SEQ_NUMBER} <= $high"
# One millisecond's keys (`low` = `high`): both ranges in one scan of FalkorDB's index, the keys' read as `seq_k1`
# (`seq_k` + 1, from `$key1_low` to `$key1_high`): the index loses most zeros (core/feed_windows.py).
_KEYED = f"{_WINDOW} AND h.{SEQ_KEY_INDEXED} >= $key1_low AND h.{SEQ_KEY_INDEXED} <= $key1_high"


def _probe(window: str, number: str) -> Statement:
    """What a page would read: up to `$cap` of the window's records' numbers, in the area (`$labels`)."""
    return Statement(f"MATCH (h:{CHANGE_LABEL})\nWHERE {window} AND {_IN_AREA}\nRETURN h.{number} AS n\nLIMIT $cap")


WINDOW_PROBE = _probe(_WINDOW, SEQ_NUMBER)
KEYED_PROBE = _probe(_KEYED, SEQ_KEY)

# The picked changes' records, each change's by its id (indexed, migration 0019): a batch's items share one `seq`,
# so reading the window again for them read the whole batch a second time (a page of 50 inside a batch of 10,000
# took 35 to 42 ms that way, 23 ms by id).
_RECORDS = (
    "WITH collect([seq, key, change_id]) AS picked\n"
    "UNWIND picked AS p\n"
    "WITH p[0] AS picked_seq, p[2] AS picked_id\n"
    f"MATCH (r:{CHANGE_LABEL} {{change_id: picked_id}}) WHERE r.seq = picked_seq"
    " AND ($labels IS NULL OR r.label IN $labels)\n"
    f"WITH r.seq AS seq, r.{SEQ_KEY} AS key, r.change_id AS change_id, r.at AS at, collect(properties(r)) AS records\n"
    "RETURN seq, key, change_id, at, records\n"
)
# The cursor's bounds past the index (a number's as `+ 0`), beside the window the index reads.
_SEQ, _KEY, _ID = past_index("h.seq"), f"h.{SEQ_KEY} + 0", past_index("h.change_id")


def _after(window: str) -> Statement:
    """The first `$limit` changes after the cursor in `window`. Parameters: `labels` (node labels or relationship
    types; null: all); `after_seq`, `after_key`, `after_id` (the cursor's; "", 0, "" for the oldest kept record);
    `horizon` (ISO text: nothing ordered later is answered yet); `low`, `high` (the window's `seq_n` bounds: every
    record after the cursor up to the page's last lies in it), and for a keyed window `key1_low`, `key1_high` (its
    keys' bounds + 1);
    `limit` (changes, not records)."""
    return Statement(
        f"MATCH (h:{CHANGE_LABEL})\n"
        f"WHERE {window} AND {_IN_AREA}\n"
        f"  AND {_SEQ} >= $after_seq AND {_SEQ} <= $horizon\n"
        f"  AND ({_SEQ} > $after_seq OR {_KEY} > $after_key OR ({_KEY} = $after_key AND {_ID} > $after_id))\n"
        f"WITH DISTINCT h.seq AS seq, h.{SEQ_KEY} AS key, h.change_id AS change_id\n"
        "ORDER BY seq, key, change_id\n"
        "LIMIT $limit\n" + _RECORDS + "ORDER BY seq, key, change_id"
    )


CHANGES_AFTER = _after(_WINDOW)
KEYED_CHANGES_AFTER = _after(_KEYED)

# The newest `limit` changes of the window (in the feed's order), for a change resource's read. Parameters:
# `labels`, `limit`, `low`, `high`.
LATEST_CHANGES = Statement(
    f"MATCH (h:{CHANGE_LABEL})\n"
    f"WHERE {_WINDOW} AND {_IN_AREA}\n"
    f"WITH DISTINCT h.seq AS seq, h.{SEQ_KEY} AS key, h.change_id AS change_id\n"
    "ORDER BY seq DESC, key DESC, change_id DESC\n"
    "LIMIT $limit\n" + _RECORDS + "ORDER BY seq, key, change_id"
)

# What changed where, stamped at or after `since` (ISO text), oldest first: the watcher's poll. `limit` bounds
# one answer; the watcher asks again from the last `at` it got when an answer is full. `since_n` is `since` as a
# `seq_n`: a record stamped at or after `since` has a `seq` at or after its stamp, so its number is no smaller.
CHANGED_AREAS = Statement(
    f"MATCH (h:{CHANGE_LABEL})\n"
    f"WHERE h.{SEQ_NUMBER} >= $since_n AND {past_index('h.at')} >= $since\n"
    "WITH DISTINCT h.at AS at, h.change_id AS change_id, h.label AS label\n"
    "RETURN at, change_id, label\n"
    "ORDER BY at, change_id\n"
    "LIMIT $limit"
)


def changed_areas(since: str, limit: int) -> Statement:
    """The watcher's poll from `since` (ISO text), at most `limit` rows."""
    return Statement(CHANGED_AREAS.text, {"since": since, "since_n": seq_number(since), "limit": limit})

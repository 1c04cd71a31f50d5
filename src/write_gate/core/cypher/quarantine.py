"""Quarantine statements: `:WriteGateQuarantine` system nodes (`core.quarantine`), outside the working graph.

Their label is reserved (no registry may hold it) and they carry no identity (`_key`) or search text, so no
read, search, statistics, export of entities or duplicate search meets one; the lossless backup carries them.
Every value, the stored arguments included, travels as a parameter. Entries are ordered by `seq` (the gate's
nanosecond clock), then `id`; optional filters are parameters that may be null.
"""

from write_gate.core.cypher.dialect import Dialect
from write_gate.core.cypher.statement import Statement
from write_gate.core.quarantine import QUARANTINE_LABEL

_Q = f"(q:{QUARANTINE_LABEL})"
_FILTERS = (
    "($error_code IS NULL OR q.error_code = $error_code)\n"
    "  AND ($label IS NULL OR $label IN q.labels)\n"
    "  AND ($agent IS NULL OR q.agent = $agent)\n"
    "  AND ($tool IS NULL OR q.tool = $tool)\n"
    "  AND ($ids IS NULL OR q.id IN $ids)"
)

# Parameters: `entries` (core.quarantine.entry_record each): a call's, or a batch's rejected items, at once.
KEEP = Statement(f"UNWIND $entries AS entry\nCREATE {_Q}\nSET q += entry\nRETURN q.id AS id")

# Read-only: how many entries there are.
COUNT = Statement(f"MATCH {_Q}\nRETURN count(q) AS entries")

# Parameters: `excess`. Drops the oldest `excess` entries (first in, first out).
DROP_OLDEST = Statement(
    f"MATCH {_Q}\nWITH q ORDER BY q.seq ASC, q.id ASC LIMIT $excess\nWITH q, q.id AS id\nDELETE q\nRETURN id"
)

# Read-only. Parameters: the filters (`error_code`, `label`, `agent`, `tool`, `ids`), `after_seq` and `after_id`
# (the cursor's), each null for none; `limit`. Newest first.
LIST = Statement(
    f"MATCH {_Q}\n"
    f"WHERE {_FILTERS}\n"
    "  AND ($after_seq IS NULL OR q.seq < $after_seq OR (q.seq = $after_seq AND q.id < $after_id))\n"
    "RETURN properties(q) AS entry, q.seq AS seq, q.id AS id\n"
    "ORDER BY seq DESC, id DESC\n"
    "LIMIT $limit"
)


def select(dialect: Dialect) -> Statement:
    """Read-only. Parameters: the filters, `limit`. Oldest first: a replay writes in the order the agents wrote.
    A replay's first statement: each row also holds the engine's clock as it ran (`now`), from which the replay
    reckons when its call arrived, in the engine's time (core.quarantine.replay_arrival)."""
    return Statement(
        f"MATCH {_Q}\n"
        f"WHERE {_FILTERS}\n"
        f"RETURN properties(q) AS entry, q.seq AS seq, q.id AS id, {dialect.clock} AS now\n"
        "ORDER BY seq ASC, id ASC\n"
        "LIMIT $limit"
    )


# Parameters: `id`, `claims` (the entry's count as the replay picked it), `replay` (the replay call's id), `now`,
# `stale_before`. A replay's claim on an entry, so two replays never both run it: a row only for the replay that
# set it (the engine runs the two SETs one after the other). Every claim counts, so an entry another replay claimed
# since this one picked it is not this replay's to try. The claim stays open (`replaying`, `claimed_by`) until its
# replay ends (END), not only while the entry is tried: a replay that picked the entry while another one ran sees
# it held, however late the engine ran its read. A claim older than `stale_before` was left by a gate that stopped
# mid-replay, and is taken over.
CLAIM = Statement(
    f"MATCH {_Q} WHERE q.id = $id AND coalesce(q.claims, 0) = $claims\n"
    "  AND (q.replaying IS NULL OR q.replaying < $stale_before)\n"
    "SET q.replaying = $now, q.claimed_by = $replay, q.claims = $claims + 1\n"
    "RETURN q.id AS id"
)


def end(dialect: Dialect) -> Statement:
    """Parameters: `ids`, `replay`. A replay's end: the claims it holds on these entries are let go (not one
    another replay took over as stale), and each is stamped `tried_at`, the engine's time: a replay whose call
    arrived before this end was running at once with this one, and does not try the entry again."""
    return Statement(
        f"MATCH {_Q} WHERE q.id IN $ids AND q.claimed_by = $replay\n"
        f"SET q.replaying = null, q.claimed_by = null, q.tried_at = {dialect.clock}\n"
        "RETURN q.id AS id"
    )


def still_rejected(dialect: Dialect) -> Statement:
    """Parameters: `id`, `error_code`, `message`, `at`. An entry replayed and still rejected keeps its place (and
    its claim, until the replay ends); `tried_at` in the engine's time, should the replay never end."""
    return Statement(
        f"MATCH {_Q} WHERE q.id = $id\n"
        "SET q.error_code = $error_code, q.message = $message, q.replayed_at = $at,\n"
        f"    q.replays = coalesce(q.replays, 0) + 1, q.tried_at = {dialect.clock}\n"
        "RETURN q.id AS id"
    )


# Parameters: `ids`. One row per entry removed.
REMOVE = Statement(f"MATCH {_Q} WHERE q.id IN $ids\nWITH q, q.id AS id\nDELETE q\nRETURN id")

"""Safe retries' records: `:WriteGateIdempotency` system nodes keyed by `id` (core.idempotency.record_id).

Their label is reserved (no registry may hold it), so no read, search, statistics or export of entities meets
one. Fields: `args` (the call's digest), `tool`, `agent`, `at` (the claim's time, ISO-8601 UTC text, which
orders as time), `seq_n` (`at` as a number, indexed, so a prune reads its chunk: core/feed_windows.py), `claim`
(the claiming call's id), `state` (pending, done, or unknown: see MARK_IN_DOUBT), and once done `outcome` (the
result's structured content as JSON text), `text` (its text content), `is_error`. Values travel as parameters
only.
"""

from write_gate.core.cypher.change_order import numbered
from write_gate.core.cypher.history_retention import before_cutoff, cutoff_params, prune_chunk
from write_gate.core.cypher.statement import Statement

IDEMPOTENCY_LABEL = "WriteGateIdempotency"
_K = f"(k:{IDEMPOTENCY_LABEL} {{id: $id}})"

# Parameters: `id`, `cutoff`. A record claimed before the cutoff has expired: it goes, so the key runs again. A
# concurrent claim's fresh record is newer than the cutoff and stays. One record, found by its unique `id`.
FORGET_EXPIRED = Statement(f"MATCH {_K} WHERE k.at < $cutoff\nDELETE k\nRETURN count(*) AS deleted")

# Parameters: `id`, `args`, `tool`, `agent`, `at`, `claim`. One row: `won` when this call created the record
# (the engine serialises the MERGE; on Memgraph a unique constraint on `id` refuses the second creator, which then
# matches), and the record as it is.
CLAIM = Statement(
    f"MERGE {_K}\n"
    "ON CREATE SET k.args = $args, k.tool = $tool, k.agent = $agent, k.at = $at, k.claim = $claim,"
    f" k.state = 'pending', {numbered('k', '$at')}\n"
    "RETURN k.claim = $claim AS won, properties(k) AS record"
)

# Parameters: `id`, `claim`, `outcome`, `text`, `is_error`. Only the claim's own call settles it.
SETTLE = Statement(
    f"MATCH {_K} WHERE k.claim = $claim\n"
    "SET k.state = 'done', k.outcome = $outcome, k.text = $text, k.is_error = $is_error\n"
    "RETURN count(*) AS settled"
)

# Parameters: `id`, `claim`. The call ended without an outcome after a write of it may have been applied: the key
# answers IDEMPOTENCY_OUTCOME_UNKNOWN from now on (core.idempotency.IN_DOUBT), never runs the call again.
MARK_IN_DOUBT = Statement(
    f"MATCH {_K} WHERE k.claim = $claim AND k.state = 'pending'\nSET k.state = 'unknown'\nRETURN count(*) AS marked"
)

# Parameters: `id`, `claim`. A transient outcome is not kept: the key is free again.
RELEASE = Statement(f"MATCH {_K} WHERE k.claim = $claim\nDELETE k\nRETURN count(*) AS released")

# Read-only. Parameters: `id`.
READ = Statement(f"MATCH {_K}\nRETURN properties(k) AS record")


def prune_records(cutoff: str, chunk: int) -> Statement:
    """Delete up to `chunk` records claimed before `cutoff`, found in the numeric window of their `seq_n`
    (core/cypher/history_retention.py); answers `deleted` (the caller repeats until a chunk comes back short)."""
    return Statement(
        f"MATCH (k:{IDEMPOTENCY_LABEL}) WHERE {before_cutoff('k')}\n"
        f"WITH k LIMIT {prune_chunk(chunk)}\n"
        "DELETE k\n"
        "RETURN count(*) AS deleted",
        cutoff_params(cutoff),
    )

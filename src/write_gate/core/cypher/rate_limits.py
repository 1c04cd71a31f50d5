"""Write-rate buckets: one `:WriteGateRate` system node per agent (core.rate_limit), in the graph the gates share,
so N gates on one graph allow an agent its `max_writes_per_minute` once, not N times.

One statement takes a token, so two gates taking at once are serialised by the engine (FalkorDB runs writes one
after another; Memgraph refuses the second of two conflicting transactions, which the driver retries, and its
unique constraint on `agent` makes two first takes one node). Fields: `agent`, `per_minute` (the limit the bucket
was filled for: another limit starts a full bucket), `tokens` (after this take), `at` (the taking gate's clock,
seconds since the epoch; it never moves back, so a gate whose clock lags refills nothing). Its label is reserved
(no registry may hold it): no read, search, statistics or export of entities meets one.
"""

from write_gate.core.cypher.statement import Statement
from write_gate.core.rate_limit import RATE_LABEL

_B = f"(b:{RATE_LABEL} {{agent: $agent}})"

# Parameters: `agent`, `per_minute` (a positive integer), `now` (seconds since the epoch, a float). One row:
# `taken` (a token was there and is now used) and `tokens` (what the bucket held before this take, refilled at
# per_minute a minute up to per_minute).
TAKE = Statement(
    f"MERGE {_B}\n"
    "WITH b, b.per_minute = $per_minute AS same, toFloat($per_minute) AS full\n"
    "WITH b, full, CASE WHEN same THEN b.tokens ELSE full END AS held,\n"
    "     CASE WHEN same AND b.at < $now THEN $now - b.at ELSE 0.0 END AS idle\n"
    "WITH b, full, held + idle * full / 60.0 AS refilled\n"
    "WITH b, CASE WHEN refilled > full THEN full ELSE refilled END AS tokens\n"
    "SET b.per_minute = $per_minute, b.at = CASE WHEN b.at > $now THEN b.at ELSE $now END,\n"
    "    b.tokens = CASE WHEN tokens >= 1.0 THEN tokens - 1.0 ELSE tokens END\n"
    "RETURN tokens >= 1.0 AS taken, tokens"
)

"""Read-only statements the web console's pages aggregate with (surface/console): writes and rejections per
minute, each agent's writes (changed or held), last write and rejections, and the drifted labels the fallback
label holds. Every value is a parameter; the one identifier (the fallback label) is validated and quoted.

Times are the gate's ISO-8601 UTC text (`core.clock`), so its first 16 characters name the minute
(`2026-11-22T08:05`) on both engines, and the lower bound `at >= $since` is a range the `at` index serves, written
exactly (core/cypher/ranges.py: FalkorDB loosens a lower bound on text too).
"""

from write_gate.core.cypher.ranges import exactly
from write_gate.core.cypher.statement import Statement
from write_gate.core.history import CHANGE_LABEL, CONFLICT_LABEL
from write_gate.core.identifiers import REMAP_FIELD, quote
from write_gate.core.quarantine import QUARANTINE_LABEL

# Parameters: `since` (ISO text). Accepted writes (changes, each counted once however many records it has) per
# minute and agent.
WRITES_PER_MINUTE = Statement(
    f"MATCH (h:{CHANGE_LABEL}) WHERE {exactly('h.at', '>=', '$since')}\n"
    "WITH substring(h.at, 0, 16) AS minute, h.agent AS agent, h.change_id AS change_id\n"
    "RETURN minute, agent, count(DISTINCT change_id) AS writes\n"
    "ORDER BY minute, agent"
)

# Parameters: `since`. Rejected writes the quarantine keeps, per minute (when kept), agent and error code.
REJECTIONS_PER_MINUTE = Statement(
    f"MATCH (q:{QUARANTINE_LABEL}) WHERE q.at >= $since\n"
    "RETURN substring(q.at, 0, 16) AS minute, q.agent AS agent, q.error_code AS error_code, count(q) AS rejections\n"
    "ORDER BY minute, agent, error_code"
)

# Each agent's accepted writes (changes) and the time of its last, over the history kept.
AGENT_WRITES = Statement(
    f"MATCH (h:{CHANGE_LABEL})\n"
    "WITH h.agent AS agent, h.change_id AS change_id, h.at AS at\n"
    "RETURN agent, count(DISTINCT change_id) AS writes, max(at) AS last_at\n"
    "ORDER BY agent"
)

# Each agent's writes that left only conflict records: a value held beside the current one (keep_both) and
# nothing changed, still a write answered written. A write that changed a value too has change records (same
# change_id, same `at`: the `at` index finds them) and is counted by AGENT_WRITES.
AGENT_HELD_WRITES = Statement(
    f"MATCH (c:{CONFLICT_LABEL})\n"
    f"OPTIONAL MATCH (h:{CHANGE_LABEL}) WHERE h.at = c.at AND h.change_id = c.change_id\n"
    "WITH c, count(h) AS recorded\n"
    "WHERE recorded = 0\n"
    "RETURN c.incoming_claim[0] AS agent, count(DISTINCT c.change_id) AS writes, max(c.at) AS last_at\n"
    "ORDER BY agent"
)

# Each agent's rejected writes in the quarantine now, and the time of its last.
AGENT_REJECTIONS = Statement(
    f"MATCH (q:{QUARANTINE_LABEL})\n"
    "RETURN q.agent AS agent, count(q) AS rejections, max(q.at) AS last_at\n"
    "ORDER BY agent"
)


def fallback_drift(fallback: str) -> Statement:
    """Parameters: `limit`. The labels writes were remapped from onto the fallback label (as written, with how
    many nodes each), most used first: what `schema suggest` drafts entries for."""
    return Statement(
        f"MATCH (n:{quote(fallback)}) WHERE n.{REMAP_FIELD} IS NOT NULL\n"
        f"RETURN n.{REMAP_FIELD} AS written, count(n) AS uses\n"
        "ORDER BY uses DESC, written\n"
        "LIMIT $limit"
    )

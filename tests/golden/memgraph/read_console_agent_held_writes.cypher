// index: none: the console's agents page over the whole history, only while a history older than the agent tallies is folded (core/agent_tallies.py)
// index: :WriteGateChange(at)
MATCH (c:WriteGateConflict)
OPTIONAL MATCH (h:WriteGateChange) WHERE h.at = c.at AND h.change_id = c.change_id
WITH c, count(h) AS recorded
WHERE recorded = 0
RETURN c.incoming_claim[0] AS agent, count(DISTINCT c.change_id) AS writes, max(c.at) AS last_at
ORDER BY agent

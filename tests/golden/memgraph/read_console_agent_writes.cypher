// index: none: the console's agents page over the whole history, only while a history older than the agent tallies is folded (core/agent_tallies.py)
MATCH (h:WriteGateChange)
WITH h.agent AS agent, h.change_id AS change_id, h.at AS at
RETURN agent, count(DISTINCT change_id) AS writes, max(at) AS last_at
ORDER BY agent

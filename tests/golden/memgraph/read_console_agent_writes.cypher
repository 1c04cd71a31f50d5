MATCH (h:WriteGateChange)
WITH h.agent AS agent, h.change_id AS change_id, h.at AS at
RETURN agent, count(DISTINCT change_id) AS writes, max(at) AS last_at
ORDER BY agent

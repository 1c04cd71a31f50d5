// index: :WriteGateChange(at)
MATCH (h:WriteGateChange) WHERE (h.at >= $since AND h.at + '' >= $since)
WITH substring(h.at, 0, 16) AS minute, h.agent AS agent, h.change_id AS change_id
RETURN minute, agent, count(DISTINCT change_id) AS writes
ORDER BY minute, agent

MATCH (q:WriteGateQuarantine)
RETURN q.agent AS agent, count(q) AS rejections, max(q.at) AS last_at
ORDER BY agent

// index: none: the quarantine holds at most quarantine_max_entries (10,000 by default)
MATCH (q:WriteGateQuarantine)
RETURN q.agent AS agent, count(q) AS rejections, max(q.at) AS last_at
ORDER BY agent

// index: none: the quarantine holds at most quarantine_max_entries (10,000 by default)
MATCH (q:WriteGateQuarantine) WHERE q.at >= $since
RETURN substring(q.at, 0, 16) AS minute, q.agent AS agent, q.error_code AS error_code, count(q) AS rejections
ORDER BY minute, agent, error_code

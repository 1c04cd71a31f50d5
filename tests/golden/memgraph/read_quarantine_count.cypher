MATCH (q:WriteGateQuarantine)
RETURN count(q) AS entries

// index: none: the quarantine holds at most quarantine_max_entries (10,000 by default)
MATCH (q:WriteGateQuarantine)
RETURN count(q) AS entries

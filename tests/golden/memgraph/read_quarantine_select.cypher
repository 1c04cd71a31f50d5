// index: none: the quarantine holds at most quarantine_max_entries (10,000 by default)
MATCH (q:WriteGateQuarantine)
WHERE ($error_code IS NULL OR q.error_code = $error_code)
  AND ($label IS NULL OR $label IN q.labels)
  AND ($agent IS NULL OR q.agent = $agent)
  AND ($tool IS NULL OR q.tool = $tool)
  AND ($ids IS NULL OR q.id IN $ids)
RETURN properties(q) AS entry, q.seq AS seq, q.id AS id, (timestamp() / 1000) AS now
ORDER BY seq ASC, id ASC
LIMIT $limit

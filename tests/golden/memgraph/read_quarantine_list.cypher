// index: none: the quarantine holds at most quarantine_max_entries (10,000 by default)
MATCH (q:WriteGateQuarantine)
WHERE ($error_code IS NULL OR q.error_code = $error_code)
  AND ($label IS NULL OR $label IN q.labels)
  AND ($agent IS NULL OR q.agent = $agent)
  AND ($tool IS NULL OR q.tool = $tool)
  AND ($ids IS NULL OR q.id IN $ids)
  AND ($after_seq IS NULL OR q.seq < $after_seq OR (q.seq = $after_seq AND q.id < $after_id))
RETURN properties(q) AS entry, q.seq AS seq, q.id AS id
ORDER BY seq DESC, id DESC
LIMIT $limit

// index: :WriteGateConflict(seq_n)
MATCH (c:WriteGateConflict)
WHERE c.seq_n >= $low AND c.seq_n <= $high AND ($status IS NULL OR c.status = $status)
  AND ($label IS NULL OR c.label = $label)
  AND ($property IS NULL OR c.property = $property)
  AND ($after_at IS NULL OR c.at + '' < $after_at OR (c.at + '' = $after_at AND c.conflict_id + '' < $after_id))
RETURN properties(c) AS conflict, c.at AS at, c.conflict_id AS conflict_id
ORDER BY at DESC, conflict_id DESC
LIMIT $limit

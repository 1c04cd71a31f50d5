// index: :WriteGateConflict(seq_n)
MATCH (c:WriteGateConflict)
WHERE c.seq_n >= $low AND c.seq_n <= $high AND ($status IS NULL OR c.status = $status)
  AND ($label IS NULL OR c.label = $label)
  AND ($property IS NULL OR c.property = $property)
RETURN c.seq_n AS n
LIMIT $cap

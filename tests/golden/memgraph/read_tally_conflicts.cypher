// index: :WriteGateConflict(seq_n)
MATCH (c:WriteGateConflict)
WHERE c.seq_n >= $low AND c.seq_n <= $high
  AND c.at + '' <= $horizon
  AND (c.at + '' > $after_at OR (c.at + '' = $after_at AND c.conflict_id + '' > $after_id))
RETURN c.at AS at, c.conflict_id AS conflict_id, c.change_id AS change_id, c.incoming_claim[0] AS agent
ORDER BY at, conflict_id
LIMIT $limit

MATCH (q:WriteGateQuarantine) WHERE q.id IN $ids AND q.claimed_by = $replay
SET q.replaying = null, q.claimed_by = null, q.tried_at = timestamp()
RETURN q.id AS id

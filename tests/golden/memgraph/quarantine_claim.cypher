MATCH (q:WriteGateQuarantine) WHERE q.id = $id AND coalesce(q.claims, 0) = $claims
  AND (q.replaying IS NULL OR q.replaying < $stale_before)
SET q.replaying = $now, q.claimed_by = $replay, q.claims = $claims + 1
RETURN q.id AS id

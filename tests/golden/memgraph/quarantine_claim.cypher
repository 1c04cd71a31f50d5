MATCH (q:WriteGateQuarantine) WHERE q.id = $id AND (q.replaying IS NULL OR q.replaying < $stale_before)
SET q.replaying = $now
RETURN q.id AS id

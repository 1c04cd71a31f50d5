MATCH (q:WriteGateQuarantine) WHERE q.id = $id
SET q.replaying = null
RETURN q.id AS id

UNWIND $entries AS entry
CREATE (q:WriteGateQuarantine)
SET q += entry
RETURN q.id AS id

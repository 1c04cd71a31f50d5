MATCH (q:WriteGateQuarantine) WHERE q.id IN $ids
WITH q, q.id AS id
DELETE q
RETURN id

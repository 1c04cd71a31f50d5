MATCH (q:WriteGateQuarantine)
WITH q ORDER BY q.seq ASC, q.id ASC LIMIT $excess
WITH q, q.id AS id
DELETE q
RETURN id

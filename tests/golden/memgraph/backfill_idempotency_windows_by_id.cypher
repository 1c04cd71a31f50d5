MATCH (h:WriteGateIdempotency) WHERE id(h) > $after
WITH h LIMIT 10000
SET h.seq_n = toInteger(replace(replace(replace(replace(substring(h.at, 2, 21), '-', ''), 'T', ''), ':', ''), '.', ''))
RETURN count(h) AS done, max(id(h)) AS last

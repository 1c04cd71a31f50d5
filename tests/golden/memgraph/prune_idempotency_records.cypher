MATCH (k:WriteGateIdempotency) WHERE k.at < $cutoff
WITH k LIMIT 10000
DELETE k
RETURN count(*) AS deleted

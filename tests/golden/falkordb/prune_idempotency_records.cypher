MATCH (k:WriteGateIdempotency) WHERE k.seq_n < $cutoff_n AND k.at + '' < $cutoff
WITH k LIMIT 10000
DELETE k
RETURN count(*) AS deleted

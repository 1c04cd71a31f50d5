MATCH (r:WriteGateChange) WHERE r.seq_n < $cutoff_n AND r.at + '' < $cutoff
WITH r LIMIT 10000
DETACH DELETE r
RETURN count(*) AS deleted

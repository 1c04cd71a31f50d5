MATCH (c:WriteGateConflict) WHERE c.seq_n < $cutoff_n AND c.at + '' < $cutoff AND c.status IN $statuses
WITH c LIMIT 10000
DETACH DELETE c
RETURN count(*) AS deleted

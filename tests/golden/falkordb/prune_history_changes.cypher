MATCH (r:WriteGateChange) WHERE (r.at < $cutoff AND r.at + '' < $cutoff)
WITH r LIMIT 10000
DETACH DELETE r
RETURN count(*) AS deleted

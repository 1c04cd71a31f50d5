MATCH (c:WriteGateConflict) WHERE c.status IN $statuses AND c.at < $cutoff
WITH c LIMIT 10000
DETACH DELETE c
RETURN count(*) AS deleted

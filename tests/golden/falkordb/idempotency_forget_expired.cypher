MATCH (k:WriteGateIdempotency {id: $id}) WHERE k.at < $cutoff
DELETE k
RETURN count(*) AS deleted

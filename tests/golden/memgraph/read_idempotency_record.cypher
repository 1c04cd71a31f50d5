// index: :WriteGateIdempotency(id)
MATCH (k:WriteGateIdempotency {id: $id})
RETURN properties(k) AS record

MATCH (n) WHERE NOT n:WriteGateIdempotency RETURN count(n) AS nodes

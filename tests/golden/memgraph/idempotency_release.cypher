MATCH (k:WriteGateIdempotency {id: $id}) WHERE k.claim = $claim
DELETE k
RETURN count(*) AS released

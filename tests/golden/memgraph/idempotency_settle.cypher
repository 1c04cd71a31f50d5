MATCH (k:WriteGateIdempotency {id: $id}) WHERE k.claim = $claim
SET k.state = 'done', k.outcome = $outcome, k.text = $text, k.is_error = $is_error
RETURN count(*) AS settled

MERGE (k:WriteGateIdempotency {id: $id})
ON CREATE SET k.args = $args, k.tool = $tool, k.agent = $agent, k.at = $at, k.claim = $claim, k.state = 'pending', k.seq_n = toInteger(replace(replace(replace(replace(substring($at, 2, 21), '-', ''), 'T', ''), ':', ''), '.', ''))
RETURN k.claim = $claim AS won, properties(k) AS record

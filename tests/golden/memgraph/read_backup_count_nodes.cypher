// index: none: a restore counts what the target holds, once
MATCH (n) WHERE NOT n:WriteGateIdempotency AND NOT n:_StatCount AND NOT n:_StatEnd AND NOT n:_StatDrop AND NOT n:_StatMeta AND NOT n:_AgentTally RETURN count(n) AS nodes

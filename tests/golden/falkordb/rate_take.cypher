MERGE (b:WriteGateRate {agent: $agent})
WITH b, b.per_minute = $per_minute AS same, toFloat($per_minute) AS full
WITH b, full, CASE WHEN same THEN b.tokens ELSE full END AS held,
     CASE WHEN same AND b.at < $now THEN $now - b.at ELSE 0.0 END AS idle
WITH b, full, held + idle * full / 60.0 AS refilled
WITH b, CASE WHEN refilled > full THEN full ELSE refilled END AS tokens
SET b.per_minute = $per_minute, b.at = CASE WHEN b.at > $now THEN b.at ELSE $now END,
    b.tokens = CASE WHEN tokens >= 1.0 THEN tokens - 1.0 ELSE tokens END
RETURN tokens >= 1.0 AS taken, tokens

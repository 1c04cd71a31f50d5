MATCH ()-[r]->() WHERE type(r) IN $types
UNWIND [['count', null]] + [['agent', r.written_by], ['source', r.source], ['confidence', CASE WHEN r.confidence IS NULL THEN null WHEN r.confidence >= 1 THEN 9 WHEN r.confidence <= 0 THEN 0 ELSE toInteger(r.confidence * 10) END], ['day', substring(coalesce(r.created_at, r.last_updated), 0, 10)]] AS d
RETURN type(r) AS name, d[0] AS dimension, d[1] AS value, count(*) AS count,
       min(r.confidence) AS low, max(r.confidence) AS high, sum(r.confidence) AS total

MATCH (n:`Organization`) WHERE n._alias_of IS NULL
UNWIND [['agent', n.written_by], ['source', n.source], ['confidence', CASE WHEN n.confidence IS NULL THEN null WHEN n.confidence >= 1 THEN 9 WHEN n.confidence <= 0 THEN 0 ELSE toInteger(n.confidence * 10) END], ['day', substring(coalesce(n.created_at, n.last_updated), 0, 10)], ['archived', n._archived_at IS NOT NULL]] AS d
RETURN 0 AS part, d[0] AS dimension, d[1] AS value, count(*) AS count,
       min(n.confidence) AS low, max(n.confidence) AS high, sum(n.confidence) AS total
UNION ALL
MATCH (n:`Person`) WHERE n._alias_of IS NULL
UNWIND [['agent', n.written_by], ['source', n.source], ['confidence', CASE WHEN n.confidence IS NULL THEN null WHEN n.confidence >= 1 THEN 9 WHEN n.confidence <= 0 THEN 0 ELSE toInteger(n.confidence * 10) END], ['day', substring(coalesce(n.created_at, n.last_updated), 0, 10)], ['archived', n._archived_at IS NOT NULL]] AS d
RETURN 1 AS part, d[0] AS dimension, d[1] AS value, count(*) AS count,
       min(n.confidence) AS low, max(n.confidence) AS high, sum(n.confidence) AS total

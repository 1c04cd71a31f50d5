// index: none: get_graph_stats' full walk, only while a graph written before the writes kept counts is walked once (core/stat_counts.py)
MATCH (n:`Organization`) WHERE n._alias_of IS NULL
WITH n.written_by AS agent, n.source AS source, CASE WHEN n.confidence IS NULL THEN null WHEN n.confidence >= 1 THEN 9 WHEN n.confidence <= 0 THEN 0 ELSE toInteger(n.confidence * 10) END AS bucket, substring(coalesce(n.created_at, n.last_updated), 0, 10) AS day, n._archived_at IS NOT NULL AS archived,
     count(*) AS rows, min(n.confidence) AS low, max(n.confidence) AS high, sum(toInteger(floor(n.confidence * (1000 * 1000 * 1000) + 0.5))) AS total
UNWIND [['agent', agent], ['source', source], ['confidence', bucket], ['day', day], ['archived', archived]] AS d
RETURN 0 AS part, d[0] AS dimension, d[1] AS value, sum(rows) AS count,
       min(low) AS low, max(high) AS high, sum(total) AS total
UNION ALL
MATCH (n:`Person`) WHERE n._alias_of IS NULL
WITH n.written_by AS agent, n.source AS source, CASE WHEN n.confidence IS NULL THEN null WHEN n.confidence >= 1 THEN 9 WHEN n.confidence <= 0 THEN 0 ELSE toInteger(n.confidence * 10) END AS bucket, substring(coalesce(n.created_at, n.last_updated), 0, 10) AS day, n._archived_at IS NOT NULL AS archived,
     count(*) AS rows, min(n.confidence) AS low, max(n.confidence) AS high, sum(toInteger(floor(n.confidence * (1000 * 1000 * 1000) + 0.5))) AS total
UNWIND [['agent', agent], ['source', source], ['confidence', bucket], ['day', day], ['archived', archived]] AS d
RETURN 1 AS part, d[0] AS dimension, d[1] AS value, sum(rows) AS count,
       min(low) AS low, max(high) AS high, sum(total) AS total

// index: none: get_graph_stats' full walk, only while a graph written before the writes kept counts is walked once (core/stat_counts.py)
MATCH ()-[r]->() WHERE type(r) IN $types
WITH type(r) AS name, r.written_by AS agent, r.source AS source, CASE WHEN r.confidence IS NULL THEN null WHEN r.confidence >= 1 THEN 9 WHEN r.confidence <= 0 THEN 0 ELSE toInteger(r.confidence * 10) END AS bucket, substring(coalesce(r.created_at, r.last_updated), 0, 10) AS day,
     count(*) AS rows, min(r.confidence) AS low, max(r.confidence) AS high, sum(toInteger(floor(r.confidence * (1000 * 1000 * 1000) + 0.5))) AS total
UNWIND [['count', null]] + [['agent', agent], ['source', source], ['confidence', bucket], ['day', day]] AS d
RETURN name AS name, d[0] AS dimension, d[1] AS value, sum(rows) AS count,
       min(low) AS low, max(high) AS high, sum(total) AS total

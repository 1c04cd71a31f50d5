// index: none: get_graph_stats' full walk, only while a graph written before the writes kept counts is walked once (core/stat_counts.py)
MATCH (n:`Organization`) WHERE n._alias_of IS NULL AND n.last_updated IS NOT NULL
WITH n ORDER BY n.last_updated ASC, n._key ASC LIMIT 1
RETURN 0 AS part, 'oldest' AS end, n.name AS name, n._key AS key, n.last_updated AS at
UNION ALL
MATCH (n:`Organization`) WHERE n._alias_of IS NULL AND n.last_updated IS NOT NULL
WITH n ORDER BY n.last_updated DESC, n._key DESC LIMIT 1
RETURN 0 AS part, 'newest' AS end, n.name AS name, n._key AS key, n.last_updated AS at
UNION ALL
MATCH (n:`Person`) WHERE n._alias_of IS NULL AND n.last_updated IS NOT NULL
WITH n ORDER BY n.last_updated ASC, n._key ASC LIMIT 1
RETURN 1 AS part, 'oldest' AS end, n.name AS name, n._key AS key, n.last_updated AS at
UNION ALL
MATCH (n:`Person`) WHERE n._alias_of IS NULL AND n.last_updated IS NOT NULL
WITH n ORDER BY n.last_updated DESC, n._key DESC LIMIT 1
RETURN 1 AS part, 'newest' AS end, n.name AS name, n._key AS key, n.last_updated AS at

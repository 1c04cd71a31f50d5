// index: none: get_graph_stats' full walk, only while a graph written before the writes kept counts is walked once (core/stat_counts.py)
MATCH (n:`Entity`) WHERE n._schema_remap_from IS NOT NULL
RETURN n._schema_remap_from AS written, count(n) AS uses
ORDER BY uses DESC, written
LIMIT $limit

// index: never sent: Memgraph pages by `_key` (MemgraphDialect.pages_by_id is False); engine ids are FalkorDB's page order
MATCH (n:`Person`) WHERE id(n) > $after AND n._grams IS NULL AND n._search IS NOT NULL
WITH n LIMIT 2000
RETURN id(n) AS id, n._search AS text, id(n) AS position

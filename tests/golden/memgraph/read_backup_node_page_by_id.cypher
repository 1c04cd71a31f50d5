// index: never sent: Memgraph pages by `_key` (MemgraphDialect.pages_by_id is False); engine ids are FalkorDB's page order
MATCH (n) WHERE id(n) > $cursor WITH n LIMIT $limit
RETURN id(n) AS id, labels(n) AS labels, properties(n) AS props

// index: never sent: Memgraph pages by `_key` (MemgraphDialect.pages_by_id is False); engine ids are FalkorDB's page order
MATCH (a) WHERE id(a) > $cursor WITH a LIMIT $limit
OPTIONAL MATCH (a)-[r]->(b)
RETURN id(a) AS from_id, id(r) AS id, id(b) AS to_id, type(r) AS type, properties(r) AS props
ORDER BY from_id, id

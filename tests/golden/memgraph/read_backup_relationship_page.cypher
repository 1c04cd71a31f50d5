// index: none: as read_backup_node_page, for the start nodes; their relationships are expanded from each
MATCH (a) WHERE id(a) > $cursor WITH a ORDER BY id(a) LIMIT $limit
OPTIONAL MATCH (a)-[r]->(b)
RETURN id(a) AS from_id, id(r) AS id, id(b) AS to_id, type(r) AS type, properties(r) AS props
ORDER BY from_id, id

MATCH (a)-[r]->(b) WHERE id(r) > $cursor WITH a, r, b ORDER BY id(r) LIMIT $limit
RETURN id(r) AS id, id(a) AS from_id, id(b) AS to_id, type(r) AS type, properties(r) AS props

MATCH (n) WHERE id(n) > $cursor
RETURN id(n) AS id, labels(n) AS labels, properties(n) AS props
ORDER BY id LIMIT $limit

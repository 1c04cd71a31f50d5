MATCH (n) WHERE id(n) > $cursor WITH n LIMIT $limit
RETURN id(n) AS id, labels(n) AS labels, properties(n) AS props

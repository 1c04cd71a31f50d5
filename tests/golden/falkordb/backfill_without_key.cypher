MATCH (n:`Person`) WHERE n._key IS NULL
RETURN id(n) AS id, properties(n) AS props
ORDER BY id
LIMIT $limit

MATCH (n:`Person`)
WHERE n._key > $after
RETURN id(n) AS id, n._key AS key
ORDER BY key
LIMIT $limit

MATCH (n:`Person`)
WHERE n._key > $after AND n._alias_of IS NULL AND n._search CONTAINS $query
RETURN id(n) AS id, n._key AS key
ORDER BY key
LIMIT $limit

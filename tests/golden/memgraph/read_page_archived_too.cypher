// index: :Person(_key)
MATCH (n:`Person`)
WHERE (n._key > $after AND n._key + '' > $after) AND n._alias_of IS NULL
RETURN 0 AS part, id(n) AS id, n._key AS key
ORDER BY key
LIMIT $limit

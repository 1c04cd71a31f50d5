// index: :Organization(_key)
// index: :Person(_key)
MATCH (n:`Organization`)
WHERE (n._key > $after AND n._key + '' > $after) AND n._alias_of IS NULL AND n._archived_at IS NULL
RETURN 0 AS part, id(n) AS id, n._key AS key
ORDER BY key
LIMIT $limit
UNION ALL
MATCH (n:`Person`)
WHERE (n._key > '' AND n._key + '' > '') AND n._alias_of IS NULL AND n._archived_at IS NULL
RETURN 1 AS part, id(n) AS id, n._key AS key
ORDER BY key
LIMIT $limit

// index: none: a migration's one-off pass over a label whose nodes have no `_key` yet
MATCH (n:`Person`) WHERE n._key IS NULL
RETURN id(n) AS id, properties(n) AS props
ORDER BY id
LIMIT $limit

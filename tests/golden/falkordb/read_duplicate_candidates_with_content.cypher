MATCH (n:`Person`)
WHERE (n._key > $after AND n._key + '' > $after) AND n._alias_of IS NULL AND n._archived_at IS NULL
RETURN id(n) AS id, n._key AS key, n.name AS name, [] AS shared, n.observations AS observations, n.tags AS tags, n.created_at AS created
ORDER BY key
LIMIT $limit

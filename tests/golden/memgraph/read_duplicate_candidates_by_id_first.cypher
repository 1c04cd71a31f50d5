// index: never sent: Memgraph pages by `_key` (MemgraphDialect.pages_by_id is False); engine ids are FalkorDB's page order
MATCH (n:`Person`)
WHERE n._alias_of IS NULL AND n._archived_at IS NULL
RETURN id(n) AS id, n._key AS key, n.name AS name, [n.`email`, n.`url`] AS shared
LIMIT $limit

// index: never sent: Memgraph pages by `_key` (MemgraphDialect.pages_by_id is False); engine ids are FalkorDB's page order
MATCH (n:`Organization`)
WHERE n._search CONTAINS $query AND n._alias_of IS NULL AND n._archived_at IS NULL
RETURN 0 AS part, id(n) AS id, id(n) AS key
LIMIT $limit
UNION ALL
MATCH (n:`Person`)
WHERE n._search CONTAINS $query AND n._alias_of IS NULL AND n._archived_at IS NULL
RETURN 1 AS part, id(n) AS id, id(n) AS key
LIMIT $limit

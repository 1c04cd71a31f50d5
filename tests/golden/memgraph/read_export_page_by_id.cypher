// index: never sent: Memgraph pages by `_key` (MemgraphDialect.pages_by_id is False); engine ids are FalkorDB's page order
MATCH (n:`Person`)
WHERE id(n) > $after AND n._alias_of IS NULL AND ($include_archived OR n._archived_at IS NULL) AND ($start IS NULL OR n.last_updated >= $start) AND ($end IS NULL OR n.last_updated <= $end) AND ($min_confidence IS NULL OR n.confidence >= $min_confidence) AND ($tags IS NULL OR any(t IN [] + coalesce(n.tags, []) WHERE t IN $tags))
RETURN id(n) AS id, labels(n) AS labels, properties(n) AS props, id(n) AS key
LIMIT $limit

// index: none: archive_entities picks by age, importance and tags across the graph: an admin's sweep
MATCH (n:`Person`)
WHERE n._alias_of IS NULL AND n._archived_at IS NULL AND (($older_than IS NOT NULL AND n.last_updated < $older_than) OR ($importance_below IS NOT NULL AND n.importance < $importance_below) OR ($k_tags IS NOT NULL AND any(t IN coalesce(n._f_tags, []) WHERE t IN $k_tags)))
RETURN id(n) AS id, labels(n) AS labels, n._key AS key, n.name AS name
UNION ALL
MATCH (n:`Organization`)
WHERE n._alias_of IS NULL AND n._archived_at IS NULL AND (($older_than IS NOT NULL AND n.last_updated < $older_than) OR ($importance_below IS NOT NULL AND n.importance < $importance_below) OR ($k_tags IS NOT NULL AND any(t IN coalesce(n._f_tags, []) WHERE t IN $k_tags)))
RETURN id(n) AS id, labels(n) AS labels, n._key AS key, n.name AS name

// index: none: the ranked search on a Memgraph without text search (before 3.6, no --experimental-enabled=text-search): every node of the label, and its answer says it scanned
MATCH (n:`Person`)
WHERE all(w IN $required WHERE n._search CONTAINS w) AND n._alias_of IS NULL AND n._archived_at IS NULL AND ($k_tags IS NULL OR any(t IN coalesce(n._f_tags, []) WHERE t IN $k_tags)) AND ($k_min_importance IS NULL OR n.importance >= $k_min_importance) AND ($k_max_importance IS NULL OR n.importance <= $k_max_importance)
WITH n, 0.0 AS score
RETURN id(n) AS id, score, n._key AS key, n._search AS text

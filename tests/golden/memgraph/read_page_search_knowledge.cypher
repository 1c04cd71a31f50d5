// index: none: the substring search's scan, where the trigram index cannot answer (shorter than a trigram, or past its cap of candidates): the label's nodes, filtered, sorted by `_key`
MATCH (n:`Person`)
WITH n WHERE n._search CONTAINS $query
WITH n WHERE (n._key > $after AND n._key + '' > $after) AND n._alias_of IS NULL AND n._archived_at IS NULL AND ($k_tags IS NULL OR any(t IN coalesce(n._f_tags, []) WHERE t IN $k_tags)) AND ($k_min_importance IS NULL OR n.importance >= $k_min_importance) AND ($k_max_importance IS NULL OR n.importance <= $k_max_importance)
RETURN 0 AS part, id(n) AS id, n._key AS key
ORDER BY key
LIMIT $limit

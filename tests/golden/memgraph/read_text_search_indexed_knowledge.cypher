// index: text write_gate_text_Person
CALL text_search.search_all('write_gate_text_Person', $query) YIELD node, score
WITH node AS n, score WHERE n._alias_of IS NULL AND n._archived_at IS NULL AND ($k_tags IS NULL OR any(t IN coalesce(n._f_tags, []) WHERE t IN $k_tags)) AND ($k_min_importance IS NULL OR n.importance >= $k_min_importance) AND ($k_max_importance IS NULL OR n.importance <= $k_max_importance)
WITH n, score ORDER BY score DESC, n._key SKIP $skip LIMIT $window
RETURN id(n) AS id, score, n._key AS key, n._search AS text

CALL db.indexes() YIELD label, types, status
WITH count(DISTINCT CASE WHEN label IN $guarded AND status = 'OPERATIONAL' AND 'FULLTEXT' IN types.`_search` THEN label END) AS ready
WITH ready WHERE ready < size($guarded)
RETURN null AS id, null AS score, null AS key, null AS text
UNION ALL
CALL db.idx.fulltext.queryNodes('Person', $query) YIELD node, score
WITH node AS n, score WHERE n._alias_of IS NULL AND n._archived_at IS NULL AND ($k_tags IS NULL OR any(t IN coalesce(n._f_tags, []) WHERE t IN $k_tags)) AND ($k_min_importance IS NULL OR n.importance >= $k_min_importance) AND ($k_max_importance IS NULL OR n.importance <= $k_max_importance)
WITH n, score ORDER BY score DESC, n._key SKIP $skip LIMIT $window
RETURN id(n) AS id, score, n._key AS key, n._search AS text

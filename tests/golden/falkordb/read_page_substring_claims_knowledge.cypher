CALL db.indexes() YIELD label, types, status
WITH count(DISTINCT CASE WHEN label IN $guarded AND status = 'OPERATIONAL' AND 'FULLTEXT' IN types.`_grams` THEN label END) AS ready
WITH ready WHERE ready < size($guarded)
RETURN -1 AS part, null AS id, null AS key
UNION ALL
CALL db.idx.fulltext.queryNodes('Person', $grams) YIELD node
WITH node AS n LIMIT $cap
WITH collect(n) AS found
UNWIND CASE WHEN size(found) < $cap THEN found ELSE [null] END AS n
WITH n WHERE n IS NULL OR (id(n) > $after AND n._search CONTAINS $query AND n._alias_of IS NULL AND n._archived_at IS NULL AND any(k IN keys(n) WHERE k STARTS WITH '_p_' AND ($p_agent IS NULL OR properties(n)[k][0] = $p_agent) AND ($p_source IS NULL OR properties(n)[k][1] = $p_source) AND ($p_min_confidence IS NULL OR properties(n)[k][3] >= $p_min_confidence) AND ($p_since IS NULL OR properties(n)[k][4] >= $p_since)) AND ($k_tags IS NULL OR any(t IN coalesce(n._f_tags, []) WHERE t IN $k_tags)) AND ($k_min_importance IS NULL OR n.importance >= $k_min_importance) AND ($k_max_importance IS NULL OR n.importance <= $k_max_importance))
RETURN 0 AS part, id(n) AS id, id(n) AS key
ORDER BY key
LIMIT $limit

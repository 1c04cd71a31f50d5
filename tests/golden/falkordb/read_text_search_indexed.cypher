CALL db.indexes() YIELD label, types, status
WITH count(DISTINCT CASE WHEN label IN $guarded AND status = 'OPERATIONAL' AND 'FULLTEXT' IN types.`_search` THEN label END) AS ready
WITH ready WHERE ready < size($guarded)
RETURN null AS id, null AS score, null AS key, null AS text
UNION ALL
CALL db.idx.fulltext.queryNodes('Person', $query) YIELD node, score
WITH node AS n, score WHERE n._alias_of IS NULL AND n._archived_at IS NULL AND any(k IN keys(n) WHERE k STARTS WITH '_p_' AND ($p_agent IS NULL OR properties(n)[k][0] = $p_agent) AND ($p_source IS NULL OR properties(n)[k][1] = $p_source) AND ($p_min_confidence IS NULL OR properties(n)[k][3] >= $p_min_confidence) AND ($p_since IS NULL OR properties(n)[k][4] >= $p_since))
WITH n, score ORDER BY score DESC, n._key SKIP $skip LIMIT $window
RETURN id(n) AS id, score, n._key AS key, n._search AS text
UNION ALL
CALL db.idx.fulltext.queryNodes('Organization', $query) YIELD node, score
WITH node AS n, score WHERE n._alias_of IS NULL AND n._archived_at IS NULL AND any(k IN keys(n) WHERE k STARTS WITH '_p_' AND ($p_agent IS NULL OR properties(n)[k][0] = $p_agent) AND ($p_source IS NULL OR properties(n)[k][1] = $p_source) AND ($p_min_confidence IS NULL OR properties(n)[k][3] >= $p_min_confidence) AND ($p_since IS NULL OR properties(n)[k][4] >= $p_since))
WITH n, score ORDER BY score DESC, n._key SKIP $skip LIMIT $window
RETURN id(n) AS id, score, n._key AS key, n._search AS text

CALL db.indexes() YIELD label, types, status
WITH count(DISTINCT CASE WHEN label IN $guarded AND status = 'OPERATIONAL' AND 'FULLTEXT' IN types.`_search` THEN label END) AS ready
WITH ready WHERE ready < size($guarded)
RETURN null AS id, null AS score, null AS key, null AS text, null AS props
UNION ALL
CALL db.idx.fulltext.queryNodes('Person', $query) YIELD node, score
WITH node AS n, score WHERE n._alias_of IS NULL
WITH n, score ORDER BY score DESC, n._key SKIP $skip LIMIT $window
RETURN id(n) AS id, score, n._key AS key, n._search AS text, properties(n) AS props

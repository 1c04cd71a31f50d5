CALL db.indexes() YIELD label, types, status
WITH count(DISTINCT CASE WHEN label IN $guarded AND status = 'OPERATIONAL' AND 'FULLTEXT' IN types.`_grams` THEN label END) AS ready
WITH ready WHERE ready < size($guarded)
RETURN -1 AS part, null AS id, null AS key
UNION ALL
CALL db.idx.fulltext.queryNodes('Organization', $grams) YIELD node
WITH node AS n LIMIT $cap
WITH collect(n) AS found
UNWIND CASE WHEN size(found) < $cap THEN found ELSE [null] END AS n
WITH n WHERE n IS NULL OR (id(n) > $after AND n._search CONTAINS $query AND n._alias_of IS NULL AND n._archived_at IS NULL)
RETURN 0 AS part, id(n) AS id, id(n) AS key
ORDER BY key
LIMIT $limit
UNION ALL
CALL db.idx.fulltext.queryNodes('Person', $grams) YIELD node
WITH node AS n LIMIT $cap
WITH collect(n) AS found
UNWIND CASE WHEN size(found) < $cap THEN found ELSE [null] END AS n
WITH n WHERE n IS NULL OR (id(n) > -1 AND n._search CONTAINS $query AND n._alias_of IS NULL AND n._archived_at IS NULL)
RETURN 1 AS part, id(n) AS id, id(n) AS key
ORDER BY key
LIMIT $limit

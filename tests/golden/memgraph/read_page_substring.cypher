// index: text write_gate_grams_Organization
// index: text write_gate_grams_Person
CALL text_search.search_all('write_gate_grams_Organization', $grams) YIELD node
WITH node AS n LIMIT $cap
WITH collect(n) AS found
UNWIND CASE WHEN size(found) < $cap THEN found ELSE [null] END AS n
WITH n WHERE n IS NULL OR ((n._key > $after AND n._key + '' > $after) AND n._search CONTAINS $query AND n._alias_of IS NULL AND n._archived_at IS NULL)
RETURN 0 AS part, id(n) AS id, n._key AS key
ORDER BY key
LIMIT $limit
UNION ALL
CALL text_search.search_all('write_gate_grams_Person', $grams) YIELD node
WITH node AS n LIMIT $cap
WITH collect(n) AS found
UNWIND CASE WHEN size(found) < $cap THEN found ELSE [null] END AS n
WITH n WHERE n IS NULL OR ((n._key > '' AND n._key + '' > '') AND n._search CONTAINS $query AND n._alias_of IS NULL AND n._archived_at IS NULL)
RETURN 1 AS part, id(n) AS id, n._key AS key
ORDER BY key
LIMIT $limit

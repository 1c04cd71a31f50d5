// index: text write_gate_grams_Person
CALL text_search.search_all('write_gate_grams_Person', $grams) YIELD node
WITH node AS n LIMIT $cap
WITH collect(n) AS found
UNWIND CASE WHEN size(found) < $cap THEN found ELSE [null] END AS n
WITH n WHERE n IS NULL OR ((n._key > $after AND n._key + '' > $after) AND n._search CONTAINS $query AND n._alias_of IS NULL)
RETURN 0 AS part, id(n) AS id, n._key AS key
ORDER BY key
LIMIT $limit

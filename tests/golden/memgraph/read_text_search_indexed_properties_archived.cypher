// index: text write_gate_text_Person
CALL text_search.search_all('write_gate_text_Person', $query) YIELD node, score
WITH node AS n, score WHERE n._alias_of IS NULL
WITH n, score ORDER BY score DESC, n._key SKIP $skip LIMIT $window
RETURN id(n) AS id, score, n._key AS key, n._search AS text, properties(n) AS props

// index: none: the substring search's scan, where the trigram index cannot answer (shorter than a trigram, or past its cap of candidates): the label's nodes, filtered, sorted by `_key`
MATCH (n:`Person`)
WITH n WHERE n._search CONTAINS $query
WITH n WHERE (n._key > $after AND n._key + '' > $after) AND n._alias_of IS NULL AND n._archived_at IS NULL AND any(k IN keys(n) WHERE k STARTS WITH '_p_' AND ($p_agent IS NULL OR properties(n)[k][0] = $p_agent) AND ($p_source IS NULL OR properties(n)[k][1] = $p_source) AND ($p_min_confidence IS NULL OR properties(n)[k][3] >= $p_min_confidence) AND ($p_since IS NULL OR properties(n)[k][4] >= $p_since))
RETURN 0 AS part, id(n) AS id, n._key AS key
ORDER BY key
LIMIT $limit

// index: none: the ranked search on a Memgraph without text search (before 3.6, no --experimental-enabled=text-search): every node of the label, and its answer says it scanned
MATCH (n:`Person`)
WHERE all(w IN $required WHERE n._search CONTAINS w) AND n._alias_of IS NULL AND n._archived_at IS NULL AND any(k IN keys(n) WHERE k STARTS WITH '_p_' AND ($p_agent IS NULL OR properties(n)[k][0] = $p_agent) AND ($p_source IS NULL OR properties(n)[k][1] = $p_source) AND ($p_min_confidence IS NULL OR properties(n)[k][3] >= $p_min_confidence) AND ($p_since IS NULL OR properties(n)[k][4] >= $p_since))
WITH n, 0.0 AS score
RETURN id(n) AS id, score, n._key AS key, n._search AS text, properties(n) AS props
UNION ALL
MATCH (n:`Organization`)
WHERE all(w IN $required WHERE n._search CONTAINS w) AND n._alias_of IS NULL AND n._archived_at IS NULL AND any(k IN keys(n) WHERE k STARTS WITH '_p_' AND ($p_agent IS NULL OR properties(n)[k][0] = $p_agent) AND ($p_source IS NULL OR properties(n)[k][1] = $p_source) AND ($p_min_confidence IS NULL OR properties(n)[k][3] >= $p_min_confidence) AND ($p_since IS NULL OR properties(n)[k][4] >= $p_since))
WITH n, 0.0 AS score
RETURN id(n) AS id, score, n._key AS key, n._search AS text, properties(n) AS props

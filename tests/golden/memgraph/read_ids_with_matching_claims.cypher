// index: id
UNWIND $ids AS i
MATCH (n) WHERE id(n) = i AND any(k IN keys(n) WHERE k STARTS WITH '_p_' AND ($p_agent IS NULL OR properties(n)[k][0] = $p_agent) AND ($p_source IS NULL OR properties(n)[k][1] = $p_source) AND ($p_min_confidence IS NULL OR properties(n)[k][3] >= $p_min_confidence) AND ($p_since IS NULL OR properties(n)[k][4] >= $p_since))
RETURN id(n) AS id

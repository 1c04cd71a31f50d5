UNWIND $ids AS i
MATCH (n) WHERE id(n) = i AND n._alias_of IS NOT NULL
RETURN id(n) AS id, n._alias_label AS label, n._alias_of AS key

MATCH (n:`Person`)
WHERE all(w IN $required WHERE n._search CONTAINS w) AND n._alias_of IS NULL
WITH n, 0.0 AS score
RETURN id(n) AS id, score, n._key AS key, n._search AS text

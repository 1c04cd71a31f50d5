// index: none: the ranked search on a Memgraph without text search (before 3.6, no --experimental-enabled=text-search): every node of the label, and its answer says it scanned
MATCH (n:`Person`)
WHERE all(w IN $required WHERE n._search CONTAINS w) AND n._alias_of IS NULL
WITH n, 0.0 AS score
RETURN id(n) AS id, score, n._key AS key, n._search AS text

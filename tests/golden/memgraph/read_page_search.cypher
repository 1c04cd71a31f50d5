// index: none: the substring search's scan, where the trigram index cannot answer (shorter than a trigram, or past its cap of candidates): the label's nodes, filtered, sorted by `_key`
MATCH (n:`Organization`)
WITH n WHERE n._search CONTAINS $query
WITH n WHERE (n._key > $after AND n._key + '' > $after) AND n._alias_of IS NULL AND n._archived_at IS NULL
RETURN 0 AS part, id(n) AS id, n._key AS key
ORDER BY key
LIMIT $limit
UNION ALL
MATCH (n:`Person`)
WITH n WHERE n._search CONTAINS $query
WITH n WHERE (n._key > '' AND n._key + '' > '') AND n._alias_of IS NULL AND n._archived_at IS NULL
RETURN 1 AS part, id(n) AS id, n._key AS key
ORDER BY key
LIMIT $limit

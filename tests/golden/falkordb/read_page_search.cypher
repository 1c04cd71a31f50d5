MATCH (n)
WHERE id(n) > $after
  AND NOT n:`Schema` AND NOT n:`WriteGateMigration`
  AND (n._search IS NULL OR n._search CONTAINS $query)
  AND (any(l IN labels(n) WHERE toLower(l) CONTAINS $query)
     OR any(k IN keys(n) WHERE NOT k IN $skip_keys AND NOT k STARTS WITH '_'
            AND any(x IN CASE WHEN typeOf(properties(n)[k]) = 'List' THEN properties(n)[k] ELSE [properties(n)[k]] END WHERE typeOf(x) = 'String' AND toLower(x) CONTAINS $query)))
RETURN id(n) AS id
ORDER BY id
LIMIT $limit

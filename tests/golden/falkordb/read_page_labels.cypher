MATCH (n)
WHERE id(n) > $after
  AND NOT n:`Schema` AND NOT n:`WriteGateMigration`
  AND any(l IN labels(n) WHERE l IN $labels)
RETURN id(n) AS id
ORDER BY id
LIMIT $limit

MATCH (n)
WHERE id(n) > $after
  AND NOT n:`Schema` AND NOT n:`WriteGateMigration`
RETURN id(n) AS id
ORDER BY id
LIMIT $limit

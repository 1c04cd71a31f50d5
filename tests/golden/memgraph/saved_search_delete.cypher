MATCH (s:SavedSearch {name: $name})
DELETE s
RETURN 1 AS deleted

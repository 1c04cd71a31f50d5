MATCH (s:SavedSearch)
RETURN properties(s) AS search, s.name AS name ORDER BY name

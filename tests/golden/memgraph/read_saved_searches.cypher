// index: none: the saved searches (:SavedSearch), a few nodes whatever the graph holds
MATCH (s:SavedSearch)
RETURN properties(s) AS search, s.name AS name ORDER BY name

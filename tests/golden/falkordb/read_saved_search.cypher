MATCH (s:SavedSearch {name: $name})
RETURN properties(s) AS search

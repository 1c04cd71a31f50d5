// index: :SavedSearch(name)
MATCH (s:SavedSearch {name: $name})
RETURN properties(s) AS search

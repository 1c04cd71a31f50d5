MATCH (s:SavedSearch {name: $name})
SET s.useCount = coalesce(s.useCount, 0) + 1, s.lastExecuted = $at
RETURN properties(s) AS search

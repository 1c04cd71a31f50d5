MATCH (s:SavedSearch {name: $name}) WHERE s._rev = $rev
SET s.query = $query, s.searchType = $searchType, s.tags = $tags, s.minImportance = $minImportance, s.maxImportance = $maxImportance, s.description = $description, s.labels = $labels, s.limit = $limit,
    s.updated_by = $agent, s.updated_at = $at, s._rev = $rev + 1
RETURN properties(s) AS search

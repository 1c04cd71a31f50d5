MERGE (s:SavedSearch {name: $name})
ON CREATE SET s += $fields, s.created_by = $agent, s.created_at = $at, s.useCount = 0, s._rev = 1, s._save_id = $save_id
RETURN s._save_id = $save_id AS created, properties(s) AS search

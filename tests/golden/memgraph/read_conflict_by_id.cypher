// index: :WriteGateConflict(conflict_id)
MATCH (c:WriteGateConflict {conflict_id: $conflict_id})
RETURN properties(c) AS conflict LIMIT 1

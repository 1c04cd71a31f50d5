MATCH (c:WriteGateConflict {conflict_id: $conflict_id}) WHERE c.status = 'open'
SET c.status = 'resolved', c.picked = $picked, c.resolved_by = $resolved_by, c.resolved_at = $resolved_at
RETURN count(c) AS resolved

// index: :WriteGateConflict(status)
MATCH (c:WriteGateConflict) WHERE c.status = 'open'
RETURN count(c) AS count

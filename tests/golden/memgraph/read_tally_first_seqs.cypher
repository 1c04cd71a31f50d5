// index: :WriteGateChange(at)
UNWIND $ats AS at
MATCH (h:WriteGateChange) WHERE h.at = at AND h.change_id IN $ids
RETURN h.change_id AS change_id, min(h.seq) AS first

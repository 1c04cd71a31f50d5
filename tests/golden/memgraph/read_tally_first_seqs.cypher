// index: :WriteGateChange(at)
UNWIND $pairs AS p
MATCH (h:WriteGateChange) WHERE h.at = p.at AND h.change_id = p.id
RETURN h.change_id AS change_id, min(h.seq) AS first

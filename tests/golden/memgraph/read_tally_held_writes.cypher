// index: :WriteGateChange(at)
// index: :WriteGateConflict(seq_n)
UNWIND $writes AS x
OPTIONAL MATCH (h:WriteGateChange) WHERE h.at = x.at AND h.change_id = x.id
WITH x, count(h) > 0 AS recorded
MATCH (c:WriteGateConflict) WHERE c.seq_n = x.n AND c.at = x.at AND c.change_id = x.id
RETURN c.change_id AS change_id, recorded, min(c.conflict_id) AS first

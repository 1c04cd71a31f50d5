// index: :WriteGateChange(at)
// index: :WriteGateConflict(seq_n)
UNWIND $ats AS x
OPTIONAL MATCH (h:WriteGateChange) WHERE h.at = x.at AND h.change_id IN $ids
WITH x, collect(DISTINCT h.change_id) AS recorded
MATCH (c:WriteGateConflict) WHERE c.seq_n = x.n AND c.at = x.at AND c.change_id IN $ids
RETURN c.change_id AS change_id, c.change_id IN recorded AS recorded, min(c.conflict_id) AS first

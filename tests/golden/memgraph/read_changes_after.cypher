// index: :WriteGateChange(seq_n)
// index: :WriteGateChange(change_id)
MATCH (h:WriteGateChange)
WHERE h.seq_n >= $low AND h.seq_n <= $high AND ($labels IS NULL OR h.label IN $labels)
  AND h.seq + '' >= $after_seq AND h.seq + '' <= $horizon
  AND (h.seq + '' > $after_seq OR h.change_id + '' > $after_id)
WITH DISTINCT h.seq AS seq, h.change_id AS change_id
ORDER BY seq, change_id
LIMIT $limit
WITH collect([seq, change_id]) AS picked
UNWIND picked AS p
WITH p[0] AS picked_seq, p[1] AS picked_id
MATCH (r:WriteGateChange {change_id: picked_id}) WHERE r.seq = picked_seq AND ($labels IS NULL OR r.label IN $labels)
WITH r.seq AS seq, r.change_id AS change_id, r.at AS at, collect(properties(r)) AS records
RETURN seq, change_id, at, records
ORDER BY seq, change_id

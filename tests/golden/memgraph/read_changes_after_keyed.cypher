// index: :WriteGateChange(seq_n)
// index: :WriteGateChange(change_id)
MATCH (h:WriteGateChange)
WHERE h.seq_n >= $low AND h.seq_n <= $high AND h.seq_k1 >= $key1_low AND h.seq_k1 <= $key1_high AND ($labels IS NULL OR h.label IN $labels)
  AND h.seq + '' >= $after_seq AND h.seq + '' <= $horizon
  AND (h.seq + '' > $after_seq OR h.seq_k + 0 > $after_key OR (h.seq_k + 0 = $after_key AND h.change_id + '' > $after_id))
WITH DISTINCT h.seq AS seq, h.seq_k AS key, h.change_id AS change_id
ORDER BY seq, key, change_id
LIMIT $limit
WITH collect([seq, key, change_id]) AS picked
UNWIND picked AS p
WITH p[0] AS picked_seq, p[2] AS picked_id
MATCH (r:WriteGateChange {change_id: picked_id}) WHERE r.seq = picked_seq AND ($labels IS NULL OR r.label IN $labels)
WITH r.seq AS seq, r.seq_k AS key, r.change_id AS change_id, r.at AS at, collect(properties(r)) AS records
RETURN seq, key, change_id, at, records
ORDER BY seq, key, change_id

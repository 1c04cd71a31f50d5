// index: :WriteGateChange(seq_n)
MATCH (h:WriteGateChange)
WHERE h.seq_n >= $low AND h.seq_n <= $high
  AND h.seq + '' >= $after_seq AND h.seq + '' <= $horizon
  AND (h.seq + '' > $after_seq OR h.change_id + '' > $after_id)
WITH DISTINCT h.seq AS seq, h.change_id AS change_id, h.at AS at, h.agent AS agent
ORDER BY seq, change_id
LIMIT $limit
RETURN seq, change_id, at, agent

// index: :WriteGateChange(seq_n)
MATCH (h:WriteGateChange)
WHERE h.seq_n >= $since_n AND h.at + '' >= $since
WITH DISTINCT h.at AS at, h.change_id AS change_id, h.label AS label
RETURN at, change_id, label
ORDER BY at, change_id
LIMIT $limit

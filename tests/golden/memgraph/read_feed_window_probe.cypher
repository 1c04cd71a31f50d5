// index: :WriteGateChange(seq_n)
MATCH (h:WriteGateChange)
WHERE h.seq_n >= $low AND h.seq_n <= $high AND ($labels IS NULL OR h.label IN $labels)
RETURN h.seq_n AS n
LIMIT $cap

MATCH (h:WriteGateChange)
WHERE h.seq_n >= $low AND h.seq_n <= $high AND h.seq_k1 >= $key1_low AND h.seq_k1 <= $key1_high AND ($labels IS NULL OR h.label IN $labels)
RETURN h.seq_k AS n
LIMIT $cap

MATCH (h:WriteGateChange) WHERE id(h) > $after
WITH h LIMIT 10000
SET h.seq_n = toInteger(replace(replace(replace(replace(substring(h.seq, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')), h.seq_k = (size(h.seq) - 24) * 1099511627776 + 0, h.seq_k1 = (size(h.seq) - 24) * 1099511627776 + 0 + 1
RETURN count(h) AS done, max(id(h)) AS last

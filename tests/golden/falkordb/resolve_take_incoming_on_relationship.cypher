MATCH (c:WriteGateConflict {conflict_id: $conflict_id}) WHERE c.status = 'open'
MATCH (a:`Person` {_key: $from_key})-[r:`WORKS_FOR`]->(b:`Organization` {_key: $to_key})
WITH c, r, CASE WHEN coalesce(r._seq, '') >= $resolved_at THEN r._seq + '#' ELSE $resolved_at END AS seq
WHERE coalesce(r._rev, 0) = $revision
SET r += $properties, r._rev = $revision + 1, r._seq = seq,
    c.status = 'resolved', c.picked = $picked, c.resolved_by = $resolved_by, c.resolved_at = $resolved_at
FOREACH (record IN $changes | CREATE (h:WriteGateChange) SET h += record, h.seq = seq, h.seq_n = toInteger(replace(replace(replace(replace(substring(seq, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')), h.seq_k = (size(seq) - 24) * 1099511627776 + 0, h.seq_k1 = (size(seq) - 24) * 1099511627776 + 0 + 1)
FOREACH (record IN $conflicts | CREATE (h:WriteGateConflict) SET h += record, h.seq_n = toInteger(replace(replace(replace(replace(substring(record.at, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')))
RETURN count(r) AS resolved

MATCH (c:WriteGateConflict {conflict_id: $conflict_id}) WHERE c.status = 'open'
MATCH (n:`Person` {_key: $key})
WITH c, n, CASE WHEN coalesce(n._seq, '') >= $resolved_at THEN n._seq + '#' ELSE $resolved_at END AS seq
WHERE coalesce(n._rev, 0) = $revision
SET n += $properties, n._rev = $revision + 1, n._seq = seq,
    c.status = 'resolved', c.picked = $picked, c.resolved_by = $resolved_by, c.resolved_at = $resolved_at
FOREACH (record IN $changes | CREATE (h:WriteGateChange) SET h += record, h.seq = seq, h.seq_n = toInteger(replace(replace(replace(replace(substring(seq, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')))
FOREACH (record IN $conflicts | CREATE (h:WriteGateConflict) SET h += record, h.seq_n = toInteger(replace(replace(replace(replace(substring(record.at, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')))
WITH n, properties(n) AS searched
SET n._search = reduce(s = '', k IN [k IN keys(searched) WHERE k STARTS WITH '_f_'] | reduce(t = s, x IN searched[k] | t + '\t' + coalesce(x, '')))
RETURN count(n) AS resolved

MERGE (n:`Person` {_key: $key})
ON CREATE SET n += $identity
WITH n WHERE n._alias_of IS NULL
WITH n, CASE WHEN coalesce(n._seq, '') >= $last_updated THEN n._seq + '#' ELSE $last_updated END AS seq
WHERE coalesce(n._rev, 0) = $revision
SET n += $properties,
    n.confidence = $confidence, n.source = $source, n.extraction_method = $extraction_method, n.write_gate_version = $write_gate_version, n.written_by = $written_by, n.last_updated = $last_updated, n.updated_by = $updated_by,
    n._stub = null,
    n._rev = $revision + 1, n._seq = seq
FOREACH (record IN $changes | CREATE (h:WriteGateChange) SET h += record, h.seq = seq, h.seq_n = toInteger(replace(replace(replace(replace(substring(seq, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')))
FOREACH (record IN $conflicts | CREATE (h:WriteGateConflict) SET h += record, h.seq_n = toInteger(replace(replace(replace(replace(substring(record.at, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')))
WITH n, properties(n) AS searched
SET n._search = reduce(s = '', k IN [k IN keys(searched) WHERE k STARTS WITH '_f_'] | reduce(t = s, x IN searched[k] | t + '\t' + coalesce(x, '')))
RETURN count(n) AS written

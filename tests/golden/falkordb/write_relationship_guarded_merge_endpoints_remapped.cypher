MERGE (a:`Person` {_key: $from_key})
ON CREATE SET a += $from_stub, a._stub = true, a.confidence = $confidence, a.source = $source, a.extraction_method = $extraction_method, a.write_gate_version = $write_gate_version, a.written_by = $written_by, a.last_updated = $last_updated, a.updated_by = $updated_by, a._due = 1
MERGE (b:`Organization` {_key: $to_key})
ON CREATE SET b += $to_stub, b._stub = true, b.confidence = $confidence, b.source = $source, b.extraction_method = $extraction_method, b.write_gate_version = $write_gate_version, b.written_by = $written_by, b.last_updated = $last_updated, b.updated_by = $updated_by, b._due = 1
WITH a, b WHERE a._alias_of IS NULL AND b._alias_of IS NULL
MERGE (a)-[r:`WORKS_FOR`]->(b)
ON CREATE SET r.created_at = $last_updated
WITH a, b, r, CASE WHEN coalesce(r._seq, '') >= $last_updated THEN r._seq + '#' ELSE $last_updated END AS seq
WHERE coalesce(r._rev, 0) = $revision
SET r.weight = CASE WHEN $fresh OR $weight IS NULL THEN coalesce(r.weight, $weight, 1.0) ELSE (coalesce(r.weight, 1.0) + $weight) / 2 END,
    r += $properties,
    r.confidence = $confidence, r.source = $source, r.extraction_method = $extraction_method, r.write_gate_version = $write_gate_version, r.written_by = $written_by, r.last_updated = $last_updated, r.updated_by = $updated_by, r._due = 1,
    r._rev = $revision + 1, r._seq = seq,
    r._schema_remap_from = $remapped_from
FOREACH (record IN $changes | CREATE (h:WriteGateChange) SET h += record, h.seq = seq, h.seq_n = toInteger(replace(replace(replace(replace(substring(seq, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')), h.seq_k = (size(seq) - 24) * 1099511627776 + 0, h.seq_k1 = (size(seq) - 24) * 1099511627776 + 0 + 1)
FOREACH (record IN $conflicts | CREATE (h:WriteGateConflict) SET h += record, h.seq_n = toInteger(replace(replace(replace(replace(substring(record.at, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')))
RETURN a._stub = true AS from_stub, b._stub = true AS to_stub, r.weight AS weight

MATCH (a:`Person` {_key: $from_key})
MATCH (b:`Organization` {_key: $to_key})
OPTIONAL MATCH (a)-[existing:`KNOWS`]->(b)
WITH a, b, existing WHERE existing IS NULL
CREATE (a)-[r:`KNOWS`]->(b)
SET r += $properties,
    r.confidence = $confidence, r.source = $source, r.extraction_method = $extraction_method, r.write_gate_version = $write_gate_version, r.written_by = $written_by, r.last_updated = $last_updated, r.updated_by = $updated_by, r._due = 1,
    r._schema_remap_from = $remapped_from,
    r.weight = $weight, r.created_at = $last_updated, r._rev = 1, r._seq = $last_updated
FOREACH (c IN $changes | CREATE (h:WriteGateChange) SET h += c, h.seq_n = toInteger(replace(replace(replace(replace(substring(c.seq, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')), h.seq_k = (size(c.seq) - 24) * 1099511627776 + 0, h.seq_k1 = (size(c.seq) - 24) * 1099511627776 + 0 + 1)
RETURN count(r) AS created

UNWIND $rows AS row
MATCH (a:`Person` {_key: row.from_key})
MATCH (b:`Organization` {_key: row.to_key})
WITH row, a, b WHERE a._alias_of IS NULL AND b._alias_of IS NULL
MERGE (a)-[r:`WORKS_FOR`]->(b)
ON CREATE SET r.created_at = row.last_updated
WITH row, a, b, r, reduce(seq_max = row.last_updated, seq_prev IN [r._seq] | CASE WHEN seq_prev >= seq_max THEN substring(seq_prev, 0, 24) + '#' + substring(toString(1000001 + CASE WHEN size(seq_prev) > 24 THEN toInteger(substring(seq_prev, 25, 6)) ELSE 0 END), 1, 6) ELSE seq_max END) AS seq
WHERE coalesce(r._rev, 0) = row.revision
SET r.weight = CASE WHEN row.fresh OR row.weight IS NULL THEN coalesce(r.weight, row.weight, 1.0) ELSE (coalesce(r.weight, 1.0) + row.weight) / 2 END,
    r += row.properties,
    r.confidence = row.confidence, r.source = row.source, r.extraction_method = row.extraction_method, r.write_gate_version = row.write_gate_version, r.written_by = row.written_by, r.last_updated = row.last_updated, r.updated_by = row.updated_by,
    r._rev = row.revision + 1, r._seq = seq
FOREACH (record IN row.changes | CREATE (h:WriteGateChange) SET h += record, h.seq = seq)
FOREACH (record IN row.conflicts | CREATE (h:WriteGateConflict) SET h += record)
SET r._schema_remap_from = coalesce(row.remapped_from, r._schema_remap_from)
RETURN row.i AS i, r.weight AS weight, a._stub = true AS from_stub, b._stub = true AS to_stub

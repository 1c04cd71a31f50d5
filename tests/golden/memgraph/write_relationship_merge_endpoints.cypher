MERGE (a:`Person` {_key: $from_key})
ON CREATE SET a += $from_stub, a._stub = true, a.confidence = $confidence, a.source = $source, a.extraction_method = $extraction_method, a.write_gate_version = $write_gate_version, a.written_by = $written_by, a.last_updated = $last_updated, a.updated_by = $updated_by, a._due = 1
MERGE (b:`Organization` {_key: $to_key})
ON CREATE SET b += $to_stub, b._stub = true, b.confidence = $confidence, b.source = $source, b.extraction_method = $extraction_method, b.write_gate_version = $write_gate_version, b.written_by = $written_by, b.last_updated = $last_updated, b.updated_by = $updated_by, b._due = 1
WITH a, b WHERE a._alias_of IS NULL AND b._alias_of IS NULL
MERGE (a)-[r:`WORKS_FOR`]->(b)
ON CREATE SET r.weight = coalesce($weight, 1.0), r.created_at = $last_updated
ON MATCH SET r.weight = CASE WHEN $weight IS NULL THEN coalesce(r.weight, 1.0) ELSE (coalesce(r.weight, 1.0) + $weight) / 2 END
SET r += $properties,
    r.confidence = $confidence, r.source = $source, r.extraction_method = $extraction_method, r.write_gate_version = $write_gate_version, r.written_by = $written_by, r.last_updated = $last_updated, r.updated_by = $updated_by, r._due = 1
RETURN a._stub = true AS from_stub, b._stub = true AS to_stub, r.weight AS weight

MATCH (a:`Person` {`name`: $from_0})
MATCH (b:`Organization` {`name`: $to_0, `country`: $to_1})
MERGE (a)-[r:`WORKS_FOR`]->(b)
ON CREATE SET r.weight = coalesce($weight, 1.0)
ON MATCH SET r.weight = CASE WHEN $weight IS NULL THEN coalesce(r.weight, 1.0) ELSE (coalesce(r.weight, 1.0) + $weight) / 2 END
SET r += $properties,
    r.confidence = $confidence, r.source = $source, r.extraction_method = $extraction_method, r.write_gate_version = $write_gate_version, r.last_updated = $last_updated, r.written_by = $written_by
RETURN a._stub = true AS from_stub, b._stub = true AS to_stub, r.weight AS weight

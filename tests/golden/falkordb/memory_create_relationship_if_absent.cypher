MATCH (a:`Person` {`name`: $from_0})
MATCH (b:`Organization` {`name`: $to_0, `country`: $to_1})
OPTIONAL MATCH (a)-[existing:`KNOWS`]->(b)
WITH a, b, existing WHERE existing IS NULL
CREATE (a)-[r:`KNOWS`]->(b)
SET r += $properties,
    r.confidence = $confidence, r.source = $source, r.extraction_method = $extraction_method, r.write_gate_version = $write_gate_version, r.last_updated = $last_updated, r.written_by = $written_by,
    r._schema_remap_from = $remapped_from,
    r.weight = 1.0
RETURN count(r) AS created

MATCH (n:`Person` {name: $name})
WITH n, [o IN $contents WHERE NOT o IN coalesce(n.observations, [])] AS added
SET n.observations = coalesce(n.observations, []) + added, n.confidence = $confidence, n.source = $source, n.extraction_method = $extraction_method, n.write_gate_version = $write_gate_version, n.last_updated = $last_updated, n.written_by = $written_by
RETURN added

MERGE (n:`Person` {`name`: $key_0})
SET n += $properties,
    n.confidence = $confidence, n.source = $source, n.extraction_method = $extraction_method, n.write_gate_version = $write_gate_version, n.last_updated = $last_updated, n.written_by = $written_by,
    n._search = CASE WHEN coalesce(n._search, '') CONTAINS $search THEN n._search WHEN size(coalesce(n._search, '')) + size($search) > 8192 THEN null ELSE coalesce(n._search, '') + $search END,
    n._schema_remap_from = $remapped_from,
    n._stub = null
RETURN count(n) AS written

OPTIONAL MATCH (x0:`Person` {name: $existing_name})
OPTIONAL MATCH (x1:`Organization` {name: $existing_name})
WITH coalesce(x0, x1) AS existing
WHERE existing IS NULL
MERGE (n:`Person` {`name`: $key_0})
SET n += $properties,
    n.confidence = $confidence, n.source = $source, n.extraction_method = $extraction_method, n.write_gate_version = $write_gate_version, n.last_updated = $last_updated, n.written_by = $written_by,
    n._search = CASE WHEN coalesce(n._search, '') CONTAINS $search THEN n._search WHEN size(coalesce(n._search, '')) + size($search) > 8192 THEN null ELSE coalesce(n._search, '') + $search END,
    n._stub = null
RETURN count(n) AS written

UNWIND $rows AS row
MERGE (n:`Person` {`name`: row.keys[0]})
SET n += row.properties, n.confidence = row.confidence, n.source = row.source, n.extraction_method = row.extraction_method, n.write_gate_version = row.write_gate_version, n.last_updated = row.last_updated, n.written_by = row.written_by, n._search = CASE WHEN coalesce(n._search, '') CONTAINS row.search THEN n._search WHEN size(coalesce(n._search, '')) + size(row.search) > 8192 THEN null ELSE coalesce(n._search, '') + row.search END,
    n._schema_remap_from = coalesce(row.remapped_from, n._schema_remap_from), n._stub = null

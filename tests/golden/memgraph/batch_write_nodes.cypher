UNWIND $rows AS row
MERGE (n:`Person` {_key: row.key})
ON CREATE SET n += row.identity
WITH row, n WHERE n._alias_of IS NULL
WITH row, n, reduce(seq_max = row.last_updated, seq_prev IN [n._seq] | CASE WHEN seq_prev >= seq_max THEN substring(seq_prev, 0, 24) + '#' + substring(toString(1000001 + CASE WHEN size(seq_prev) > 24 THEN toInteger(substring(seq_prev, 25, 6)) ELSE 0 END), 1, 6) ELSE seq_max END) AS seq
WHERE coalesce(n._rev, 0) = row.revision
SET n += row.properties, n.confidence = row.confidence, n.source = row.source, n.extraction_method = row.extraction_method, n.write_gate_version = row.write_gate_version, n.written_by = row.written_by, n.last_updated = row.last_updated, n.updated_by = row.updated_by,
    n._schema_remap_from = coalesce(row.remapped_from, n._schema_remap_from), n._stub = null,
    n._rev = row.revision + 1, n._seq = seq
FOREACH (record IN row.changes | CREATE (h:WriteGateChange) SET h += record, h.seq = seq)
FOREACH (record IN row.conflicts | CREATE (h:WriteGateConflict) SET h += record)
WITH n, row
SET n._search = reduce(s = '', k IN [k IN keys(n) WHERE k STARTS WITH '_f_'] | reduce(t = s, x IN properties(n)[k] | t + '\t' + coalesce(x, '')))
RETURN row.i AS i

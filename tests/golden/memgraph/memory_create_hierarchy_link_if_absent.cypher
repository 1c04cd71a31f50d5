MATCH (a:`Person` {_key: $from_key})
MATCH (b:`Organization` {_key: $to_key})
OPTIONAL MATCH hierarchy_loop = (b)-[:`CHILD_OF`*]->(a)
OPTIONAL MATCH (a)-[hierarchy_other:`CHILD_OF`]->(hierarchy_up) WHERE id(hierarchy_up) <> id(b)
WITH a, b, count(hierarchy_loop) AS hierarchy_loops, count(hierarchy_other) AS hierarchy_others
WITH a, b WHERE id(a) <> id(b) AND hierarchy_loops = 0 AND hierarchy_others = 0
OPTIONAL MATCH (a)-[existing:`CHILD_OF`]->(b)
WITH a, b, existing WHERE existing IS NULL
CREATE (a)-[r:`CHILD_OF`]->(b)
SET r += $properties,
    r.confidence = $confidence, r.source = $source, r.extraction_method = $extraction_method, r.write_gate_version = $write_gate_version, r.written_by = $written_by, r.last_updated = $last_updated, r.updated_by = $updated_by, r._due = 1,
    r.weight = $weight, r.created_at = $last_updated, r._rev = 1, r._seq = $last_updated
FOREACH (c IN $changes | CREATE (h:WriteGateChange) SET h += c, h.seq_n = toInteger(replace(replace(replace(replace(substring(c.seq, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')), h.seq_k = (size(c.seq) - 24) * 1099511627776 + 0, h.seq_k1 = (size(c.seq) - 24) * 1099511627776 + 0 + 1)
RETURN count(r) AS created

OPTIONAL MATCH (x0:`Person` {_key: $name_key})
OPTIONAL MATCH (x1:`Organization` {_key: $name_key})
OPTIONAL MATCH (x2:`Npc`) WHERE x2.name = $name
WITH coalesce(x0, x1, x2) AS existing
WHERE existing IS NULL
CREATE (n:`Person` {_key: $key})
SET n += $identity, n += $values, n += $extra, n._search = $search, n._grams = $grams, n.confidence = $confidence, n.source = $source, n.extraction_method = $extraction_method, n.write_gate_version = $write_gate_version, n.written_by = $written_by, n.last_updated = $last_updated, n.updated_by = $updated_by, n._due = 1, n._rev = 1, n._seq = $last_updated
FOREACH (c IN $changes | CREATE (h:WriteGateChange) SET h += c, h.seq_n = toInteger(replace(replace(replace(replace(substring(c.seq, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')), h.seq_k = (size(c.seq) - 24) * 1099511627776 + 0, h.seq_k1 = (size(c.seq) - 24) * 1099511627776 + 0 + 1)
RETURN true AS written

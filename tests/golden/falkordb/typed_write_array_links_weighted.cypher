MATCH (t0:`Faction` {_key: $to0_key})
MATCH (t1:`Entity` {_key: $to1_key})
MERGE (n:`Faction` {_key: $key})
ON CREATE SET n += $identity
WITH n, t0, t1 WHERE n._alias_of IS NULL AND t0._alias_of IS NULL AND t1._alias_of IS NULL
SET n += $properties, n.confidence = $confidence, n.source = $source, n.extraction_method = $extraction_method, n.write_gate_version = $write_gate_version, n.written_by = $written_by, n.last_updated = $last_updated, n.updated_by = $updated_by, n._due = 1, n._stub = null
WITH n, t0, t1, properties(n) AS searched
WITH n, t0, t1, string.join([k IN [k IN keys(searched) WHERE k STARTS WITH '_f_'] | string.join([x IN searched[k] | '\t' + coalesce(x, '')], '')], '') AS searched_text
SET n._search = searched_text, n._grams = [size_ IN [size(searched_text)] | string.join([c_ IN [j_ IN range(0, size_ - 3, 62) | substring(searched_text, j_, CASE WHEN size_ - j_ < 64 THEN size_ - j_ ELSE 64 END)] | [x_ IN [replace(replace(replace(replace(replace(replace(c_, ' ', 'ᐁ'), '-', 'ᐂ'), '.', 'ᐃ'), '\'', 'ᐄ'), '_', 'ᐅ'), '/', 'ᐆ')] | string.join([i_ IN range(0, size(x_) - 3) | ' ' + substring(x_, i_, 3)], '')][0]], '')][0]
WITH n, t0, t1
OPTIONAL MATCH (n)-[old0:`ALLIED_WITH`]->(x0) WHERE NOT id(x0) IN [id(t0), id(t1)]
WITH n, t0, t1, collect(old0) AS stale0
FOREACH (r IN stale0 | FOREACH (c IN [record IN [{change_id: $change_id, at: $at, agent: $agent, op: 'delete', subject: 'relationship', label: type(r), from_label: labels(startNode(r))[0], from_key: startNode(r)._key, to_label: labels(endNode(r))[0], to_key: endNode(r)._key, revision: r._rev, seq: CASE WHEN coalesce(r._seq, '') >= $at THEN r._seq + '#' ELSE $at END, properties: [k IN keys(r) WHERE NOT k STARTS WITH '_'], before_values: [k IN keys(r) WHERE NOT k STARTS WITH '_' | [properties(r)[k]]], after_values: [k IN keys(r) WHERE NOT k STARTS WITH '_' | []], before_claims: [k IN keys(r) WHERE NOT k STARTS WITH '_' | coalesce(properties(r)['_p_' + k], [])]}] WHERE size(record.properties) > 0] | CREATE (h:WriteGateChange) SET h += c, h.seq_n = toInteger(replace(replace(replace(replace(substring(c.seq, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')), h.seq_k = (size(c.seq) - 24) * 1099511627776 + 0, h.seq_k1 = (size(c.seq) - 24) * 1099511627776 + 0 + 1))
FOREACH (_sx IN [_sx IN stale0 WHERE coalesce(_sx._s, '') <> ''] | CREATE (:_StatDrop {s: _sx._s}))
FOREACH (o IN stale0 | DELETE o)
MERGE (n)-[r0:`ALLIED_WITH`]->(t0)
ON CREATE SET r0.weight = coalesce($weight, 1.0), r0.created_at = $last_updated
ON MATCH SET r0.weight = CASE WHEN $weight IS NULL THEN coalesce(r0.weight, 1.0) ELSE (coalesce(r0.weight, 1.0) + $weight) / 2 END
SET r0.confidence = $confidence, r0.source = $source, r0.extraction_method = $extraction_method, r0.write_gate_version = $write_gate_version, r0.written_by = $written_by, r0.last_updated = $last_updated, r0.updated_by = $updated_by, r0._due = 1
MERGE (n)-[r1:`ALLIED_WITH`]->(t1)
ON CREATE SET r1.weight = coalesce($weight, 1.0), r1.created_at = $last_updated
ON MATCH SET r1.weight = CASE WHEN $weight IS NULL THEN coalesce(r1.weight, 1.0) ELSE (coalesce(r1.weight, 1.0) + $weight) / 2 END
SET r1.confidence = $confidence, r1.source = $source, r1.extraction_method = $extraction_method, r1.write_gate_version = $write_gate_version, r1.written_by = $written_by, r1.last_updated = $last_updated, r1.updated_by = $updated_by, r1._due = 1
WITH n, t0, t1, r0, r1
OPTIONAL MATCH (n)-[old1:`BASED_IN`]->(x1) WHERE NOT id(x1) IN [id(t1)]
WITH n, t0, t1, r0, r1, collect(old1) AS stale1
FOREACH (r IN stale1 | FOREACH (c IN [record IN [{change_id: $change_id, at: $at, agent: $agent, op: 'delete', subject: 'relationship', label: type(r), from_label: labels(startNode(r))[0], from_key: startNode(r)._key, to_label: labels(endNode(r))[0], to_key: endNode(r)._key, revision: r._rev, seq: CASE WHEN coalesce(r._seq, '') >= $at THEN r._seq + '#' ELSE $at END, properties: [k IN keys(r) WHERE NOT k STARTS WITH '_'], before_values: [k IN keys(r) WHERE NOT k STARTS WITH '_' | [properties(r)[k]]], after_values: [k IN keys(r) WHERE NOT k STARTS WITH '_' | []], before_claims: [k IN keys(r) WHERE NOT k STARTS WITH '_' | coalesce(properties(r)['_p_' + k], [])]}] WHERE size(record.properties) > 0] | CREATE (h:WriteGateChange) SET h += c, h.seq_n = toInteger(replace(replace(replace(replace(substring(c.seq, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')), h.seq_k = (size(c.seq) - 24) * 1099511627776 + 0, h.seq_k1 = (size(c.seq) - 24) * 1099511627776 + 0 + 1))
FOREACH (_sx IN [_sx IN stale1 WHERE coalesce(_sx._s, '') <> ''] | CREATE (:_StatDrop {s: _sx._s}))
FOREACH (o IN stale1 | DELETE o)
MERGE (n)-[r2:`BASED_IN`]->(t1)
ON CREATE SET r2.weight = coalesce($weight, 1.0), r2.created_at = $last_updated
ON MATCH SET r2.weight = CASE WHEN $weight IS NULL THEN coalesce(r2.weight, 1.0) ELSE (coalesce(r2.weight, 1.0) + $weight) / 2 END
SET r2.confidence = $confidence, r2.source = $source, r2.extraction_method = $extraction_method, r2.write_gate_version = $write_gate_version, r2.written_by = $written_by, r2.last_updated = $last_updated, r2.updated_by = $updated_by, r2._due = 1
WITH n, t0, t1, r0, r1, r2
OPTIONAL MATCH (n)-[old2:`RIVAL_OF`]->(x2) WHERE NOT id(x2) IN []
WITH n, t0, t1, r0, r1, r2, collect(old2) AS stale2
FOREACH (r IN stale2 | FOREACH (c IN [record IN [{change_id: $change_id, at: $at, agent: $agent, op: 'delete', subject: 'relationship', label: type(r), from_label: labels(startNode(r))[0], from_key: startNode(r)._key, to_label: labels(endNode(r))[0], to_key: endNode(r)._key, revision: r._rev, seq: CASE WHEN coalesce(r._seq, '') >= $at THEN r._seq + '#' ELSE $at END, properties: [k IN keys(r) WHERE NOT k STARTS WITH '_'], before_values: [k IN keys(r) WHERE NOT k STARTS WITH '_' | [properties(r)[k]]], after_values: [k IN keys(r) WHERE NOT k STARTS WITH '_' | []], before_claims: [k IN keys(r) WHERE NOT k STARTS WITH '_' | coalesce(properties(r)['_p_' + k], [])]}] WHERE size(record.properties) > 0] | CREATE (h:WriteGateChange) SET h += c, h.seq_n = toInteger(replace(replace(replace(replace(substring(c.seq, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')), h.seq_k = (size(c.seq) - 24) * 1099511627776 + 0, h.seq_k1 = (size(c.seq) - 24) * 1099511627776 + 0 + 1))
FOREACH (_sx IN [_sx IN stale2 WHERE coalesce(_sx._s, '') <> ''] | CREATE (:_StatDrop {s: _sx._s}))
FOREACH (o IN stale2 | DELETE o)
RETURN count(n) AS written, collect([r0.weight, r1.weight, r2.weight]) AS weights, collect([t0._stub = true, t1._stub = true]) AS stubs

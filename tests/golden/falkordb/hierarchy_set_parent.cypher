MATCH (child:`Person` {_key: $child_key})
MATCH (parent:`Organization` {_key: $parent_key})
WITH child, parent WHERE child._alias_of IS NULL AND parent._alias_of IS NULL
WITH child, parent WHERE id(child) <> id(parent)
OPTIONAL MATCH loop = (parent)-[:`CHILD_OF`*]->(child)
WITH child, parent, count(loop) AS loops
WHERE loops = 0
OPTIONAL MATCH (child)-[old:`CHILD_OF`]->()
WITH child, parent, collect(old) AS old
FOREACH (r IN old | FOREACH (c IN [record IN [{change_id: $change_id, at: $at, agent: $agent, op: 'delete', subject: 'relationship', label: type(r), from_label: labels(startNode(r))[0], from_key: startNode(r)._key, to_label: labels(endNode(r))[0], to_key: endNode(r)._key, revision: r._rev, seq: CASE WHEN coalesce(r._seq, '') >= $at THEN r._seq + '#' ELSE $at END, properties: [k IN keys(r) WHERE NOT k STARTS WITH '_'], before_values: [k IN keys(r) WHERE NOT k STARTS WITH '_' | [properties(r)[k]]], after_values: [k IN keys(r) WHERE NOT k STARTS WITH '_' | []], before_claims: [k IN keys(r) WHERE NOT k STARTS WITH '_' | coalesce(properties(r)['_p_' + k], [])]}] WHERE size(record.properties) > 0] | CREATE (h:WriteGateChange) SET h += c, h.seq_n = toInteger(replace(replace(replace(replace(substring(c.seq, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')), h.seq_k = (size(c.seq) - 24) * 1099511627776 + 0, h.seq_k1 = (size(c.seq) - 24) * 1099511627776 + 0 + 1))
FOREACH (_sx IN [_sx IN old WHERE coalesce(_sx._s, '') <> ''] | CREATE (:_StatDrop {s: _sx._s}))
FOREACH (gone IN old | DELETE gone)
CREATE (child)-[r:`CHILD_OF`]->(parent)
SET r += $properties,
    r.confidence = $confidence, r.source = $source, r.extraction_method = $extraction_method, r.write_gate_version = $write_gate_version, r.written_by = $written_by, r.last_updated = $last_updated, r.updated_by = $updated_by, r._due = 1,
    r.weight = 1.0, r.created_at = $last_updated, r._rev = 1, r._seq = $at
SET child.last_updated = $at, child._due = 1
FOREACH (c IN $changes | CREATE (h:WriteGateChange) SET h += c, h.seq_n = toInteger(replace(replace(replace(replace(substring(c.seq, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')), h.seq_k = (size(c.seq) - 24) * 1099511627776 + 0, h.seq_k1 = (size(c.seq) - 24) * 1099511627776 + 0 + 1)
RETURN count(r) AS written

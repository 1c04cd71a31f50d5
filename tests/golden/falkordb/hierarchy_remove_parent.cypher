MATCH (child:`Person` {_key: $child_key})
OPTIONAL MATCH (child)-[old:`CHILD_OF`]->()
WITH child, collect(old) AS old
FOREACH (r IN old | FOREACH (c IN [record IN [{change_id: $change_id, at: $at, agent: $agent, op: 'delete', subject: 'relationship', label: type(r), from_label: labels(startNode(r))[0], from_key: startNode(r)._key, to_label: labels(endNode(r))[0], to_key: endNode(r)._key, revision: r._rev, seq: CASE WHEN coalesce(r._seq, '') >= $at THEN r._seq + '#' ELSE $at END, properties: [k IN keys(r) WHERE NOT k STARTS WITH '_'], before_values: [k IN keys(r) WHERE NOT k STARTS WITH '_' | [properties(r)[k]]], after_values: [k IN keys(r) WHERE NOT k STARTS WITH '_' | []], before_claims: [k IN keys(r) WHERE NOT k STARTS WITH '_' | coalesce(properties(r)['_p_' + k], [])]}] WHERE size(record.properties) > 0] | CREATE (h:WriteGateChange) SET h += c, h.seq_n = toInteger(replace(replace(replace(replace(substring(c.seq, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')), h.seq_k = (size(c.seq) - 24) * 1099511627776 + 0, h.seq_k1 = (size(c.seq) - 24) * 1099511627776 + 0 + 1))
FOREACH (_sx IN [_sx IN old WHERE coalesce(_sx._s, '') <> ''] | CREATE (:_StatDrop {s: _sx._s}))
FOREACH (gone IN old | DELETE gone)
SET child.last_updated = $at, child._due = 1
RETURN size(old) AS removed

MATCH (child:`Person` {_key: $child_key})
OPTIONAL MATCH (child)-[old:`CHILD_OF`]->()
WITH child, collect(old) AS old
FOREACH (c IN reduce(acc = [], r IN old | acc + [record IN [{change_id: $change_id, at: $at, agent: $agent, op: 'delete', subject: 'relationship', label: type(r), from_label: labels(startNode(r))[0], from_key: startNode(r)._key, to_label: labels(endNode(r))[0], to_key: endNode(r)._key, revision: r._rev, seq: reduce(seq_max = $at, seq_prev IN [r._seq] | CASE WHEN seq_prev >= seq_max THEN substring(seq_prev, 0, 24) + '#' + substring(toString(1000001 + CASE WHEN size(seq_prev) > 24 THEN toInteger(substring(seq_prev, 25, 6)) ELSE 0 END), 1, 6) ELSE seq_max END), properties: [k IN keys(r) WHERE NOT k STARTS WITH '_'], before_values: [k IN keys(r) WHERE NOT k STARTS WITH '_' | [properties(r)[k]]], after_values: [k IN keys(r) WHERE NOT k STARTS WITH '_' | []], before_claims: [k IN keys(r) WHERE NOT k STARTS WITH '_' | coalesce(properties(r)['_p_' + k], [])]}] WHERE size(record.properties) > 0]) | CREATE (h:WriteGateChange) SET h += c)
FOREACH (gone IN old | DELETE gone)
RETURN size(old) AS removed

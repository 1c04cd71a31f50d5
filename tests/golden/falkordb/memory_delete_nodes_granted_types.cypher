UNWIND $ids AS i
MATCH (n) WHERE id(n) = i AND n.name IN $names
OPTIONAL MATCH (n)-[rel]-()
WITH n, collect(DISTINCT type(rel)) AS types
WHERE all(t IN types WHERE t IN $allowed_types)
WITH collect(n) AS doomed
UNWIND doomed AS d
OPTIONAL MATCH (d)-[gone]-()
WITH doomed, collect(DISTINCT gone) AS gone
FOREACH (c IN reduce(acc = [], d IN doomed | acc + [record IN [{change_id: $change_id, at: $at, agent: $agent, op: 'delete', subject: 'node', label: labels(d)[0], key: d._key, revision: d._rev, seq: reduce(seq_max = $at, seq_prev IN [d._seq] | CASE WHEN seq_prev >= seq_max THEN substring(seq_prev, 0, 24) + '#' + substring(toString(1000001 + CASE WHEN size(seq_prev) > 24 THEN toInteger(substring(seq_prev, 25, 6)) ELSE 0 END), 1, 6) ELSE seq_max END), properties: [k IN keys(d) WHERE NOT k STARTS WITH '_'], before_values: [k IN keys(d) WHERE NOT k STARTS WITH '_' | [properties(d)[k]]], after_values: [k IN keys(d) WHERE NOT k STARTS WITH '_' | []], before_claims: [k IN keys(d) WHERE NOT k STARTS WITH '_' | coalesce(properties(d)['_p_' + k], [])]}] WHERE size(record.properties) > 0]) + reduce(acc = [], r IN gone | acc + [record IN [{change_id: $change_id, at: $at, agent: $agent, op: 'delete', subject: 'relationship', label: type(r), from_label: labels(startNode(r))[0], from_key: startNode(r)._key, to_label: labels(endNode(r))[0], to_key: endNode(r)._key, revision: r._rev, seq: reduce(seq_max = $at, seq_prev IN [r._seq] | CASE WHEN seq_prev >= seq_max THEN substring(seq_prev, 0, 24) + '#' + substring(toString(1000001 + CASE WHEN size(seq_prev) > 24 THEN toInteger(substring(seq_prev, 25, 6)) ELSE 0 END), 1, 6) ELSE seq_max END), properties: [k IN keys(r) WHERE NOT k STARTS WITH '_'], before_values: [k IN keys(r) WHERE NOT k STARTS WITH '_' | [properties(r)[k]]], after_values: [k IN keys(r) WHERE NOT k STARTS WITH '_' | []], before_claims: [k IN keys(r) WHERE NOT k STARTS WITH '_' | coalesce(properties(r)['_p_' + k], [])]}] WHERE size(record.properties) > 0]) | CREATE (h:WriteGateChange) SET h += c)
WITH doomed
UNWIND doomed AS n
DETACH DELETE n
RETURN count(*) AS deleted

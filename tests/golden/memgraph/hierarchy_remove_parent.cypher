MATCH (child:`Person` {_key: $child_key})
OPTIONAL MATCH (child)-[old:`CHILD_OF`]->()
WITH child, collect(old) AS old
FOREACH (c IN reduce(acc = [], r IN old | acc + [k IN keys(r) WHERE NOT k STARTS WITH '_' | {change_id: $change_id, at: $at, agent: $agent, op: 'delete', subject: 'relationship', label: type(r), from_label: labels(startNode(r))[0], from_key: startNode(r)._key, to_label: labels(endNode(r))[0], to_key: endNode(r)._key, revision: r._rev, property: k, before: properties(r)[k], before_claim: properties(r)['_p_' + k]}]) | CREATE (h:WriteGateChange) SET h += c)
FOREACH (gone IN old | DELETE gone)
RETURN size(old) AS removed

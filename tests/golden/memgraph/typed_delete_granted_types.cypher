MATCH (n:`Npc` {_key: $key})
OPTIONAL MATCH (n)-[rel]-()
WITH n, collect(DISTINCT type(rel)) AS types
WHERE all(t IN types WHERE t IN $allowed_types)
OPTIONAL MATCH (n)-[gone]-()
WITH n, collect(DISTINCT gone) AS gone
FOREACH (c IN [k IN keys(n) WHERE NOT k STARTS WITH '_' | {change_id: $change_id, at: $at, agent: $agent, op: 'delete', subject: 'node', label: labels(n)[0], key: n._key, revision: n._rev, property: k, before: properties(n)[k], before_claim: properties(n)['_p_' + k]}] + reduce(acc = [], r IN gone | acc + [k IN keys(r) WHERE NOT k STARTS WITH '_' | {change_id: $change_id, at: $at, agent: $agent, op: 'delete', subject: 'relationship', label: type(r), from_label: labels(startNode(r))[0], from_key: startNode(r)._key, to_label: labels(endNode(r))[0], to_key: endNode(r)._key, revision: r._rev, property: k, before: properties(r)[k], before_claim: properties(r)['_p_' + k]}]) | CREATE (h:WriteGateChange) SET h += c)
DETACH DELETE n
RETURN count(*) AS deleted

UNWIND $ids AS i
MATCH (n) WHERE id(n) = i AND n._archived_at IS NOT NULL
FOREACH (c IN [{change_id: $change_id, at: $at, agent: $agent, op: 'set', subject: 'node', label: labels(n)[0], key: n._key, revision: coalesce(n._rev, 0) + 1, property: '_archived_at', before: n._archived_at, after: null}] | CREATE (h:WriteGateChange) SET h += c)
SET n._archived_at = null, n._archived_by = null, n._rev = coalesce(n._rev, 0) + 1
RETURN id(n) AS id

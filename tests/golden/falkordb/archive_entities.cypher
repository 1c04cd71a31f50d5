UNWIND $ids AS i
MATCH (n) WHERE id(n) = i AND n._alias_of IS NULL AND n._archived_at IS NULL AND (($older_than IS NOT NULL AND n.last_updated < $older_than) OR ($importance_below IS NOT NULL AND n.importance < $importance_below) OR ($k_tags IS NOT NULL AND any(t IN coalesce(n._f_tags, []) WHERE t IN $k_tags)))
FOREACH (c IN [{change_id: $change_id, at: $at, agent: $agent, op: 'set', subject: 'node', label: labels(n)[0], key: n._key, revision: coalesce(n._rev, 0) + 1, property: '_archived_at', before: n._archived_at, after: $at}] | CREATE (h:WriteGateChange) SET h += c)
SET n._archived_at = $at, n._archived_by = $agent, n._rev = coalesce(n._rev, 0) + 1
RETURN id(n) AS id

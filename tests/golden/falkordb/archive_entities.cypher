UNWIND $ids AS i
MATCH (n) WHERE id(n) = i AND n._alias_of IS NULL AND n._archived_at IS NULL AND (($older_than IS NOT NULL AND n.last_updated < $older_than) OR ($importance_below IS NOT NULL AND n.importance < $importance_below) OR ($k_tags IS NOT NULL AND any(t IN coalesce(n._f_tags, []) WHERE t IN $k_tags)))
WITH n, CASE WHEN coalesce(n._seq, '') >= $at THEN n._seq + '#' ELSE $at END AS seq
FOREACH (c IN [{change_id: $change_id, at: $at, agent: $agent, op: 'set', subject: 'node', label: labels(n)[0], key: n._key, revision: coalesce(n._rev, 0) + 1, seq: seq, properties: ['_archived_at'], before_values: [CASE WHEN n._archived_at IS NULL THEN [] ELSE [n._archived_at] END], after_values: [CASE WHEN $at IS NULL THEN [] ELSE [$at] END], before_claims: [[]]}] | CREATE (h:WriteGateChange) SET h += c, h.seq_n = toInteger(replace(replace(replace(replace(substring(c.seq, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')), h.seq_k = (size(c.seq) - 24) * 1099511627776 + 0, h.seq_k1 = (size(c.seq) - 24) * 1099511627776 + 0 + 1)
SET n._archived_at = $at, n._archived_by = $agent, n._rev = coalesce(n._rev, 0) + 1, n._seq = seq, n._due = 1
RETURN id(n) AS id

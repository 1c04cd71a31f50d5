UNWIND $ids AS i
MATCH (n) WHERE id(n) = i AND n._alias_of IS NULL AND n._archived_at IS NULL AND (($older_than IS NOT NULL AND n.last_updated < $older_than) OR ($importance_below IS NOT NULL AND n.importance < $importance_below) OR ($k_tags IS NOT NULL AND any(t IN coalesce(n._f_tags, []) WHERE t IN $k_tags)))
WITH n, reduce(seq_max = $at, seq_prev IN [n._seq] | CASE WHEN seq_prev >= seq_max THEN substring(seq_prev, 0, 24) + '#' + substring(toString(1000001 + CASE WHEN size(seq_prev) > 24 THEN toInteger(substring(seq_prev, 25, 6)) ELSE 0 END), 1, 6) ELSE seq_max END) AS seq
FOREACH (c IN [{change_id: $change_id, at: $at, agent: $agent, op: 'set', subject: 'node', label: labels(n)[0], key: n._key, revision: coalesce(n._rev, 0) + 1, seq: seq, properties: ['_archived_at'], before_values: [CASE WHEN n._archived_at IS NULL THEN [] ELSE [n._archived_at] END], after_values: [CASE WHEN $at IS NULL THEN [] ELSE [$at] END], before_claims: [[]]}] | CREATE (h:WriteGateChange) SET h += c)
SET n._archived_at = $at, n._archived_by = $agent, n._rev = coalesce(n._rev, 0) + 1, n._seq = seq
RETURN id(n) AS id

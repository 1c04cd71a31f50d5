MATCH (n) WHERE id(n) = $id AND n.name = $name
WITH n, coalesce(n.observations, []) AS obs, coalesce(n._f_observations, []) AS folded
WITH n, obs, folded, [i IN range(0, size(obs) - 1) WHERE NOT obs[i] IN $observations] AS keep,
     CASE WHEN coalesce(n._seq, '') >= $at THEN n._seq + '#' ELSE $at END AS seq
WHERE size(keep) < size(obs)
FOREACH (c IN [{change_id: $change_id, at: $at, agent: $agent, op: 'set', subject: 'node', label: labels(n)[0], key: n._key, revision: coalesce(n._rev, 0) + 1, seq: seq, properties: ['observations'], before_values: [CASE WHEN n.observations IS NULL THEN [] ELSE [n.observations] END], after_values: [[[i IN keep | obs[i]]]], before_claims: [coalesce(n._p_observations, [])], claim: $claim}] | CREATE (h:WriteGateChange) SET h += c, h.seq_n = toInteger(replace(replace(replace(replace(substring(c.seq, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')))
SET n.observations = [i IN keep | obs[i]],
    n._f_observations = [i IN keep | folded[i]],
    n._p_observations = $claim,
    n._rev = coalesce(n._rev, 0) + 1, n._seq = seq,
    n.last_updated = $last_updated, n.updated_by = $updated_by
WITH n, properties(n) AS searched
SET n._search = reduce(s = '', k IN [k IN keys(searched) WHERE k STARTS WITH '_f_'] | reduce(t = s, x IN searched[k] | t + '\t' + coalesce(x, '')))

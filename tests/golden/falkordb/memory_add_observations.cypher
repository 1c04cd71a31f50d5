MATCH (n) WHERE id(n) = $id AND n.name = $name
WITH n, [i IN range(0, size($contents) - 1) WHERE NOT $contents[i] IN coalesce(n.observations, [])] AS new,
     CASE WHEN coalesce(n._seq, '') >= $at THEN n._seq + '#' ELSE $at END AS seq
WHERE size(new) > 0
FOREACH (c IN [{change_id: $change_id, at: $at, agent: $agent, op: 'set', subject: 'node', label: labels(n)[0], key: n._key, revision: coalesce(n._rev, 0) + 1, seq: seq, properties: ['observations'], before_values: [CASE WHEN n.observations IS NULL THEN [] ELSE [n.observations] END], after_values: [[coalesce(n.observations, []) + [i IN new | $contents[i]]]], before_claims: [coalesce(n._p_observations, [])], claim: $claim}] | CREATE (h:WriteGateChange) SET h += c, h.seq_n = toInteger(replace(replace(replace(replace(substring(c.seq, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')), h.seq_k = (size(c.seq) - 24) * 1099511627776 + 0, h.seq_k1 = (size(c.seq) - 24) * 1099511627776 + 0 + 1)
SET n.observations = coalesce(n.observations, []) + [i IN new | $contents[i]],
    n._f_observations = coalesce(n._f_observations, []) + [i IN new | $folded[i]],
    n._p_observations = $claim,
    n._rev = coalesce(n._rev, 0) + 1, n._seq = seq,
    n.last_updated = $last_updated, n.updated_by = $updated_by, n._due = 1
WITH n, new, properties(n) AS searched
WITH n, new, string.join([k IN [k IN keys(searched) WHERE k STARTS WITH '_f_'] | string.join([x IN searched[k] | '\t' + coalesce(x, '')], '')], '') AS searched_text
SET n._search = searched_text, n._grams = [size_ IN [size(searched_text)] | string.join([c_ IN [j_ IN range(0, size_ - 3, 62) | substring(searched_text, j_, CASE WHEN size_ - j_ < 64 THEN size_ - j_ ELSE 64 END)] | [x_ IN [replace(replace(replace(replace(replace(replace(c_, ' ', 'ᐁ'), '-', 'ᐂ'), '.', 'ᐃ'), '\'', 'ᐄ'), '_', 'ᐅ'), '/', 'ᐆ')] | string.join([i_ IN range(0, size(x_) - 3) | ' ' + substring(x_, i_, 3)], '')][0]], '')][0]
RETURN [i IN new | $contents[i]] AS added

MERGE (n:`Person` {_key: $key})
ON CREATE SET n += $identity, n._search = $search, n._grams = $grams, n._rev = 0
WITH n, $values AS values, $extra AS extra, coalesce($numbers, []) AS numbers, properties(n) AS now, n._rev = 0 AS created, CASE WHEN coalesce(n._seq, '') >= $last_updated THEN n._seq + '#' ELSE $last_updated END AS seq WHERE n._alias_of IS NULL
WITH n, values, extra, numbers, now, created, seq, CASE WHEN created THEN $key_names ELSE [] END + [k IN keys(values) WHERE created OR NOT (coalesce(now[k] = values[k], false) AND toString(CASE WHEN k IN numbers AND now[k] = values[k] THEN now[k] ELSE 0 END) = toString(CASE WHEN k IN numbers THEN values[k] ELSE 0 END))] AS changed
WITH n, values, extra, numbers, now, seq, size([k IN keys(values) WHERE now[k] IS NOT NULL AND now['_p_' + k] IS NOT NULL AND (now['_p_' + k][0] <> $written_by OR now['_p_' + k][1] <> $source)]) = 0 AS go, NOT created AND (any(k IN keys(values) WHERE size(coalesce(now['_f_' + k], [])) > 0 OR size(coalesce(extra['_f_' + k], [])) > 0)) AS retext,
     {change_id: $change_id, at: $last_updated, seq: seq, revision: coalesce(n._rev, 0) + 1, op: 'set', subject: 'node', label: 'Person', key: $key, agent: $written_by, claim: $claim, properties: changed, before_values: CASE WHEN created THEN null ELSE [k IN changed | CASE WHEN now[k] IS NULL THEN [] ELSE [now[k]] END] END, after_values: [k IN changed | [coalesce(values[k], $identity[k])]], before_claims: CASE WHEN created THEN null ELSE [k IN changed | coalesce(now['_p_' + k], [])] END} AS record
FOREACH (w IN CASE WHEN go THEN [1] ELSE [] END |
  SET n += values,
      n += extra,
      n.confidence = $confidence, n.source = $source, n.extraction_method = $extraction_method, n.write_gate_version = $write_gate_version, n.written_by = $written_by, n.last_updated = $last_updated, n.updated_by = $updated_by, n._due = 1,
      n._stub = null,
      n._rev = coalesce(n._rev, 0) + 1,
      n._seq = seq
  FOREACH (h IN CASE WHEN size(record.properties) > 0 THEN [1] ELSE [] END | CREATE (c:WriteGateChange) SET c += record, c.seq_n = toInteger(replace(replace(replace(replace(substring(record.seq, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')), c.seq_k = (size(record.seq) - 24) * 1099511627776 + 0, c.seq_k1 = (size(record.seq) - 24) * 1099511627776 + 0 + 1)
  FOREACH (text IN CASE WHEN retext THEN [string.join([string.join([k IN [k IN keys(now) WHERE k STARTS WITH '_f_' AND NOT k IN keys(extra)] | string.join([x IN now[k] | '\t' + coalesce(x, '')], '')], ''), string.join([k IN [k IN keys(extra) WHERE k STARTS WITH '_f_'] | string.join([x IN extra[k] | '\t' + coalesce(x, '')], '')], '')], '')] ELSE [] END | SET n._search = text, n._grams = [size_ IN [size(text)] | string.join([c_ IN [j_ IN range(0, size_ - 3, 62) | substring(text, j_, CASE WHEN size_ - j_ < 64 THEN size_ - j_ ELSE 64 END)] | [x_ IN [replace(replace(replace(replace(replace(replace(c_, ' ', 'ᐁ'), '-', 'ᐂ'), '.', 'ᐃ'), '\'', 'ᐄ'), '_', 'ᐅ'), '/', 'ᐆ')] | string.join([i_ IN range(0, size(x_) - 3) | ' ' + substring(x_, i_, 3)], '')][0]], '')][0])
)
RETURN go AS written, CASE WHEN go THEN null ELSE now END AS current

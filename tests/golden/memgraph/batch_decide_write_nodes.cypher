UNWIND $rows AS row
WITH row, $provenances[row.p] AS prov
MERGE (n:`Person` {_key: row.key})
ON CREATE SET n += row.identity, n._search = row.search, n._grams = row.grams, n._rev = 0, n._f__label = coalesce(row.label_fold, $label_fold), n.created_at = prov.last_updated
WITH row, prov, n, row.values AS values, row.extra AS extra, coalesce(row.numbers, []) AS numbers, properties(n) AS now, n._rev = 0 AS created, CASE WHEN coalesce(n._seq, '') >= prov.last_updated THEN n._seq + '#' ELSE prov.last_updated END AS seq WHERE n._alias_of IS NULL
WITH row, prov, n, values, extra, numbers, now, created, seq, CASE WHEN created THEN row.key_names ELSE [] END + [k IN keys(values) WHERE created OR NOT (coalesce(now[k] = values[k], false) AND toString(CASE WHEN k IN numbers AND now[k] = values[k] THEN now[k] ELSE 0 END) = toString(CASE WHEN k IN numbers THEN values[k] ELSE 0 END))] AS changed
WITH row, prov, n, values, extra, numbers, now, seq, size([k IN keys(values) WHERE now[k] IS NOT NULL AND now['_p_' + k] IS NOT NULL AND (now['_p_' + k][0] <> prov.written_by OR now['_p_' + k][1] <> prov.source)]) = 0 AS go, NOT created AND (any(k IN keys(values) WHERE size(coalesce(now['_f_' + k], [])) > 0 OR size(coalesce(extra['_f_' + k], [])) > 0) OR row.remapped_from IS NOT NULL) AS retext,
     {change_id: row.change_id, at: prov.last_updated, seq: seq, revision: coalesce(n._rev, 0) + 1, op: 'set', subject: 'node', label: 'Person', key: row.key, agent: prov.written_by, claim: prov.claim, properties: changed, before_values: CASE WHEN created THEN null ELSE [k IN changed | CASE WHEN now[k] IS NULL THEN [] ELSE [now[k]] END] END, after_values: [k IN changed | [coalesce(values[k], row.identity[k])]], before_claims: CASE WHEN created THEN null ELSE [k IN changed | coalesce(now['_p_' + k], [])] END} AS record
FOREACH (w IN CASE WHEN go THEN [1] ELSE [] END |
  SET n += values,
      n += extra,
      n.confidence = prov.confidence, n.source = prov.source, n.extraction_method = prov.extraction_method, n.write_gate_version = prov.write_gate_version, n.written_by = prov.written_by, n.last_updated = prov.last_updated, n.updated_by = prov.updated_by, n._due = 1,
      n._stub = null,
      n._schema_remap_from = coalesce(row.remapped_from, n._schema_remap_from),
      n._rev = coalesce(n._rev, 0) + 1,
      n._seq = seq
  FOREACH (h IN CASE WHEN size(record.properties) > 0 THEN [1] ELSE [] END | CREATE (c:WriteGateChange) SET c += record, c.seq_n = toInteger(replace(replace(replace(replace(substring(record.seq, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')), c.seq_k = (size(record.seq) - 24) * 1099511627776 + row.i, c.seq_k1 = (size(record.seq) - 24) * 1099511627776 + row.i + 1)
  FOREACH (text IN CASE WHEN retext THEN [reduce(t = '', t_s IN [reduce(w = '', w_s IN [k IN [k IN keys(now) WHERE k STARTS WITH '_f_' AND NOT k IN keys(extra)] | reduce(v = '', v_s IN [x IN now[k] | '\t' + coalesce(x, '')] | v + v_s)] | w + w_s), reduce(w = '', w_s IN [k IN [k IN keys(extra) WHERE k STARTS WITH '_f_'] | reduce(v = '', v_s IN [x IN extra[k] | '\t' + coalesce(x, '')] | v + v_s)] | w + w_s)] | t + t_s)] ELSE [] END | SET n._search = text, n._grams = [size_ IN [size(text)] | reduce(h = '', h_s IN [c_ IN [j_ IN range(0, size_ - 3, 62) | substring(text, j_, CASE WHEN size_ - j_ < 64 THEN size_ - j_ ELSE 64 END)] | [x_ IN [replace(replace(replace(replace(replace(replace(c_, ' ', 'ᐁ'), '-', 'ᐂ'), '.', 'ᐃ'), '\'', 'ᐄ'), '_', 'ᐅ'), '/', 'ᐆ')] | reduce(g = '', g_s IN [i_ IN range(0, size(x_) - 3) | ' ' + substring(x_, i_, 3)] | g + g_s)][0]] | h + h_s)][0])
)
RETURN row.i AS i, go AS written, CASE WHEN go THEN null ELSE now END AS current

UNWIND $rows AS row
WITH row, $provenances[row.p] AS prov
MATCH (a:`Person` {_key: row.from_key})
MATCH (b:`Organization` {_key: row.to_key})
WITH row, prov, a, b WHERE a._alias_of IS NULL AND b._alias_of IS NULL
MERGE (a)-[r:`WORKS_FOR`]->(b)
ON CREATE SET r._rev = 0, r.created_at = prov.last_updated
WITH row, prov, a, b, r, row.values AS values, row.extra AS extra, coalesce(row.numbers, []) AS numbers, properties(r) AS now, r._rev = 0 AS created, CASE WHEN coalesce(r._seq, '') >= prov.last_updated THEN r._seq + '#' ELSE prov.last_updated END AS seq
WITH row, prov, a, b, r, values, extra, numbers, now, created, seq, CASE WHEN created OR row.weight IS NULL THEN coalesce(now.weight, row.weight, 1.0) ELSE (coalesce(now.weight, 1.0) + row.weight) / 2 END AS weight
WITH row, prov, a, b, r, values, extra, numbers, now, created, seq, weight, [k IN keys(values) WHERE created OR NOT (coalesce(now[k] = values[k], false) AND toString(CASE WHEN k IN numbers AND now[k] = values[k] THEN now[k] ELSE 0 END) = toString(CASE WHEN k IN numbers THEN values[k] ELSE 0 END))] + CASE WHEN created OR NOT coalesce(now.weight = weight, false) THEN ['weight'] ELSE [] END AS changed
WITH row, prov, a, b, r, values, extra, numbers, now, seq, weight, size([k IN keys(values) WHERE now[k] IS NOT NULL AND now['_p_' + k] IS NOT NULL AND (now['_p_' + k][0] <> prov.written_by OR now['_p_' + k][1] <> prov.source)]) = 0 AS go,
     {change_id: row.change_id, at: prov.last_updated, seq: seq, revision: coalesce(r._rev, 0) + 1, op: 'set', subject: 'relationship', label: 'WORKS_FOR', from_label: 'Person', from_key: row.from_key, to_label: 'Organization', to_key: row.to_key, agent: prov.written_by, claim: prov.claim, properties: changed, before_values: CASE WHEN created THEN null ELSE [k IN changed | CASE WHEN now[k] IS NULL THEN [] ELSE [now[k]] END] END, after_values: [k IN changed | [CASE WHEN k = 'weight' THEN weight ELSE values[k] END]], before_claims: CASE WHEN created THEN null ELSE [k IN changed | coalesce(now['_p_' + k], [])] END} AS record
FOREACH (w IN CASE WHEN go THEN [1] ELSE [] END |
  SET r.weight = weight,
      r += values,
      r += extra,
      r.confidence = prov.confidence, r.source = prov.source, r.extraction_method = prov.extraction_method, r.write_gate_version = prov.write_gate_version, r.written_by = prov.written_by, r.last_updated = prov.last_updated, r.updated_by = prov.updated_by, r._due = 1,
      r._schema_remap_from = coalesce(row.remapped_from, r._schema_remap_from),
      r._rev = coalesce(r._rev, 0) + 1,
      r._seq = seq
  FOREACH (h IN CASE WHEN size(record.properties) > 0 THEN [1] ELSE [] END | CREATE (c:WriteGateChange) SET c += record, c.seq_n = toInteger(replace(replace(replace(replace(substring(record.seq, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')), c.seq_k = (size(record.seq) - 24) * 1099511627776 + row.i, c.seq_k1 = (size(record.seq) - 24) * 1099511627776 + row.i + 1)
)
WITH row, prov, a, b, r, now, go
RETURN row.i AS i, go AS written, CASE WHEN go THEN null ELSE now END AS current, r.weight AS weight, a._stub = true AS from_stub, b._stub = true AS to_stub

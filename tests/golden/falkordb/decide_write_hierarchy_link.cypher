MATCH (a:`Person` {_key: $from_key})
MATCH (b:`Organization` {_key: $to_key})
WITH a, b WHERE a._alias_of IS NULL AND b._alias_of IS NULL
OPTIONAL MATCH hierarchy_loop = (b)-[:`CHILD_OF`*]->(a)
OPTIONAL MATCH (a)-[hierarchy_other:`CHILD_OF`]->(hierarchy_up) WHERE id(hierarchy_up) <> id(b)
WITH a, b, count(hierarchy_loop) AS hierarchy_loops, count(hierarchy_other) AS hierarchy_others
WITH a, b WHERE id(a) <> id(b) AND hierarchy_loops = 0 AND hierarchy_others = 0
MERGE (a)-[r:`CHILD_OF`]->(b)
ON CREATE SET r._rev = 0, r.created_at = $last_updated
WITH a, b, r, $values AS values, $extra AS extra, coalesce($numbers, []) AS numbers, properties(r) AS now, r._rev = 0 AS created, CASE WHEN coalesce(r._seq, '') >= $last_updated THEN r._seq + '#' ELSE $last_updated END AS seq
WITH a, b, r, values, extra, numbers, now, created, seq, CASE WHEN created OR $weight IS NULL THEN coalesce(now.weight, $weight, 1.0) ELSE (coalesce(now.weight, 1.0) + $weight) / 2 END AS weight
WITH a, b, r, values, extra, numbers, now, created, seq, weight, [k IN keys(values) WHERE created OR NOT (coalesce(now[k] = values[k], false) AND toString(CASE WHEN k IN numbers AND now[k] = values[k] THEN now[k] ELSE 0 END) = toString(CASE WHEN k IN numbers THEN values[k] ELSE 0 END))] + CASE WHEN created OR NOT coalesce(now.weight = weight, false) THEN ['weight'] ELSE [] END AS changed
WITH a, b, r, values, extra, numbers, now, seq, weight, size([k IN keys(values) WHERE now[k] IS NOT NULL AND now['_p_' + k] IS NOT NULL AND (now['_p_' + k][0] <> $written_by OR now['_p_' + k][1] <> $source)]) = 0 AS go,
     {change_id: $change_id, at: $last_updated, seq: seq, revision: coalesce(r._rev, 0) + 1, op: 'set', subject: 'relationship', label: 'CHILD_OF', from_label: 'Person', from_key: $from_key, to_label: 'Organization', to_key: $to_key, agent: $written_by, claim: $claim, properties: changed, before_values: CASE WHEN created THEN null ELSE [k IN changed | CASE WHEN now[k] IS NULL THEN [] ELSE [now[k]] END] END, after_values: [k IN changed | [CASE WHEN k = 'weight' THEN weight ELSE values[k] END]], before_claims: CASE WHEN created THEN null ELSE [k IN changed | coalesce(now['_p_' + k], [])] END} AS record
FOREACH (w IN CASE WHEN go THEN [1] ELSE [] END |
  SET r.weight = weight,
      r += values,
      r += extra,
      r.confidence = $confidence, r.source = $source, r.extraction_method = $extraction_method, r.write_gate_version = $write_gate_version, r.written_by = $written_by, r.last_updated = $last_updated, r.updated_by = $updated_by, r._due = 1,
      r._rev = coalesce(r._rev, 0) + 1,
      r._seq = seq
  FOREACH (h IN CASE WHEN size(record.properties) > 0 THEN [1] ELSE [] END | CREATE (c:WriteGateChange) SET c += record, c.seq_n = toInteger(replace(replace(replace(replace(substring(record.seq, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')), c.seq_k = (size(record.seq) - 24) * 1099511627776 + 0, c.seq_k1 = (size(record.seq) - 24) * 1099511627776 + 0 + 1)
)
WITH a, b, r, now, go
RETURN go AS written, CASE WHEN go THEN null ELSE now END AS current, r.weight AS weight, a._stub = true AS from_stub, b._stub = true AS to_stub

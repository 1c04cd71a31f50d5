MATCH (kept:`Person` {_key: $survivor_key})
MATCH (m:`Person` {_key: $merged_key})
WHERE id(kept) <> id(m) AND kept._alias_of IS NULL AND m._alias_of IS NULL AND kept.`observations` = $was_0 AND kept.`_f_observations` = $was_1
OPTIONAL MATCH (m)-[seen]-()
WITH kept, m, collect(DISTINCT seen) AS rels
WITH kept, m, [r IN rels | toString(id(r)) + '@' + coalesce(r.last_updated, '')] AS seen,
     reduce(seq_max = $last_updated, seq_prev IN [kept._seq, m._seq] + [seq_of IN rels | seq_of._seq] | CASE WHEN coalesce(seq_prev, '') >= seq_max THEN seq_prev + '#' ELSE seq_max END) AS seq
WHERE size(seen) = size($seen) AND all(f IN seen WHERE f IN $seen)
OPTIONAL MATCH (m)-[rest]-()
WITH kept, m, seq, collect(DISTINCT rest) AS leftover
FOREACH (_sx IN [_sx IN leftover WHERE coalesce(_sx._s, '') <> ''] | CREATE (:_StatDrop {s: _sx._s}))
FOREACH (d IN leftover | DELETE d)
SET kept.`observations` = $combined_0,
    kept.`_f_observations` = $combined_1,
    kept._f__alias = coalesce(kept._f__alias, []) + $alias_text,
    kept._stub = CASE WHEN m._stub IS NULL THEN null ELSE kept._stub END,
    kept.last_updated = $last_updated, kept.updated_by = $updated_by,
    kept._rev = coalesce(kept._rev, 0) + 1, kept._seq = seq, m._seq = seq,
    m._alias_of = kept._key, m._alias_label = $survivor_label, m._due = 1, kept._due = 1,
    m.last_updated = $last_updated, m.updated_by = $updated_by
WITH kept, seq, properties(kept) AS searched
WITH kept, seq, reduce(w = '', w_s IN [k IN [k IN keys(searched) WHERE k STARTS WITH '_f_'] | reduce(v = '', v_s IN [x IN searched[k] | '\t' + coalesce(x, '')] | v + v_s)] | w + w_s) AS searched_text
SET kept._search = searched_text, kept._grams = [size_ IN [size(searched_text)] | reduce(h = '', h_s IN [c_ IN [j_ IN range(0, size_ - 3, 62) | substring(searched_text, j_, CASE WHEN size_ - j_ < 64 THEN size_ - j_ ELSE 64 END)] | [x_ IN [replace(replace(replace(replace(replace(replace(c_, ' ', 'ᐁ'), '-', 'ᐂ'), '.', 'ᐃ'), '\'', 'ᐄ'), '_', 'ᐅ'), '/', 'ᐆ')] | reduce(g = '', g_s IN [i_ IN range(0, size(x_) - 3) | ' ' + substring(x_, i_, 3)] | g + g_s)][0]] | h + h_s)][0]
FOREACH (record IN $changes | CREATE (h:WriteGateChange) SET h += record, h.seq = seq, h.seq_n = toInteger(replace(replace(replace(replace(substring(seq, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')), h.seq_k = (size(seq) - 24) * 1099511627776 + 0, h.seq_k1 = (size(seq) - 24) * 1099511627776 + 0 + 1)
FOREACH (record IN $conflicts | CREATE (h:WriteGateConflict) SET h += record, h.seq_n = toInteger(replace(replace(replace(replace(substring(record.at, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')))
RETURN kept._key AS survivor

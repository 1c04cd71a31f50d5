MERGE (n:`Person` {_key: $key})
ON CREATE SET n += $identity
WITH n WHERE n._alias_of IS NULL
WITH n, CASE WHEN coalesce(n._seq, '') >= $last_updated THEN n._seq + '#' ELSE $last_updated END AS seq
WHERE coalesce(n._rev, 0) = $revision
SET n += $properties,
    n.confidence = $confidence, n.source = $source, n.extraction_method = $extraction_method, n.write_gate_version = $write_gate_version, n.written_by = $written_by, n.last_updated = $last_updated, n.updated_by = $updated_by, n._due = 1,
    n._stub = null,
    n._rev = $revision + 1, n._seq = seq
FOREACH (record IN $changes | CREATE (h:WriteGateChange) SET h += record, h.seq = seq, h.seq_n = toInteger(replace(replace(replace(replace(substring(seq, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')), h.seq_k = (size(seq) - 24) * 1099511627776 + 0, h.seq_k1 = (size(seq) - 24) * 1099511627776 + 0 + 1)
FOREACH (record IN $conflicts | CREATE (h:WriteGateConflict) SET h += record, h.seq_n = toInteger(replace(replace(replace(replace(substring(record.at, 2, 21), '-', ''), 'T', ''), ':', ''), '.', '')))
WITH n, properties(n) AS searched
WITH n, string.join([k IN [k IN keys(searched) WHERE k STARTS WITH '_f_'] | string.join([x IN searched[k] | '\t' + coalesce(x, '')], '')], '') AS searched_text
SET n._search = searched_text, n._grams = [size_ IN [size(searched_text)] | string.join([c_ IN [j_ IN range(0, size_ - 3, 62) | substring(searched_text, j_, CASE WHEN size_ - j_ < 64 THEN size_ - j_ ELSE 64 END)] | [x_ IN [replace(replace(replace(replace(replace(replace(c_, ' ', 'ᐁ'), '-', 'ᐂ'), '.', 'ᐃ'), '\'', 'ᐄ'), '_', 'ᐅ'), '/', 'ᐆ')] | string.join([i_ IN range(0, size(x_) - 3) | ' ' + substring(x_, i_, 3)], '')][0]], '')][0]
RETURN count(n) AS written

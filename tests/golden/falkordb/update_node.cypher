MATCH (n:`Person` {_key: $key})
WITH n WHERE n._alias_of IS NULL
WITH n WHERE coalesce(n._rev, 0) = $revision
SET n += $properties,
    n.last_updated = $last_updated, n.updated_by = $updated_by,
    n._rev = $revision + 1
FOREACH (record IN $changes | CREATE (h:WriteGateChange) SET h += record)
FOREACH (record IN $conflicts | CREATE (h:WriteGateConflict) SET h += record)
WITH n
SET n._search = reduce(s = '', k IN [k IN keys(n) WHERE k STARTS WITH '_f_'] | reduce(t = s, x IN properties(n)[k] | t + '\t' + coalesce(x, '')))
RETURN count(n) AS written

UNWIND $rows AS row
MATCH (n) WHERE id(n) = row.id
SET n += row.props
WITH n, properties(n) AS searched
SET n._search = reduce(s = '', k IN [k IN keys(searched) WHERE k STARTS WITH '_f_'] | reduce(t = s, x IN searched[k] | t + '\t' + coalesce(x, '')))

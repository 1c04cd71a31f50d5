UNWIND $rows AS row
MATCH (n) WHERE id(n) = row.id
SET n += row.props
WITH n
SET n._search = reduce(s = '', k IN [k IN keys(n) WHERE k STARTS WITH '_f_'] | reduce(t = s, x IN properties(n)[k] | t + '\t' + coalesce(x, '')))

WITH [] AS found
OPTIONAL MATCH (x0:`Organization`) WHERE x0._search CONTAINS $query AND x0._alias_of IS NULL AND ($after = '' OR x0._key > $after) AND x0._archived_at IS NULL
WITH found, x0 ORDER BY x0._key LIMIT $take
WITH found, collect(x0) AS adding
WITH found + adding AS found
OPTIONAL MATCH (x1:`Person`) WHERE x1._search CONTAINS $query AND x1._alias_of IS NULL AND x1._archived_at IS NULL
WITH found, x1 ORDER BY x1._key LIMIT $take
WITH found, collect(x1) AS adding
WITH found + adding AS found
WITH found[0..$limit] AS found, size(found) > $limit AS next
UNWIND range(0, size(found) - 1) AS at
WITH found[at] AS n, at, next
OPTIONAL MATCH (n)-[r]-(o) WHERE $include_archived OR o._archived_at IS NULL
WITH n, at, next, r ORDER BY id(r)
WITH n, at, next, collect(r) AS rels
WITH n, at, next, size(rels) > $per_node AS more, rels[0..$per_node] AS page
UNWIND CASE WHEN size(page) = 0 THEN [null] ELSE page END AS r
WITH n, at, next, more, r, CASE WHEN r IS NULL THEN null WHEN id(startNode(r)) = id(n) THEN endNode(r) ELSE startNode(r) END AS m
RETURN at, id(n) AS id, labels(n) AS labels, properties(n) AS props, next, more,
       id(r) AS rid, type(r) AS rtype, id(startNode(r)) AS rstart, properties(r) AS rprops,
       id(m) AS mid, m.name AS mname, m._key AS mkey

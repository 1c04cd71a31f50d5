UNWIND $ids AS i
MATCH (n) WHERE id(n) = i AND ($include_archived OR n._archived_at IS NULL)
OPTIONAL MATCH (n)-[r]-(o)
WITH n, r, o ORDER BY id(r)
WITH n, [x IN collect(CASE WHEN $include_archived OR o._archived_at IS NULL THEN r END) WHERE id(x) > $after] AS rels
WITH n, size(rels) > $per_node AS more, rels[0..$per_node] AS page
UNWIND CASE WHEN size(page) = 0 THEN [null] ELSE page END AS r
WITH n, more, r, CASE WHEN r IS NULL THEN null WHEN id(startNode(r)) = id(n) THEN endNode(r) ELSE startNode(r) END AS m
RETURN id(n) AS id, labels(n) AS labels, properties(n) AS props, more,
       id(r) AS rid, type(r) AS rtype, id(startNode(r)) AS rstart, properties(r) AS rprops,
       id(m) AS mid, m.name AS mname, m._key AS mkey

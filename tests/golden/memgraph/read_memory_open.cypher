WITH [] AS found
OPTIONAL MATCH (x0:`Person`) WHERE x0._key IN $name_keys
WITH found, x0
WITH found, collect(x0) AS adding
WITH found + adding AS found
OPTIONAL MATCH (x1:`Organization`) WHERE x1._key IN $name_keys
WITH found, x1
WITH found, collect(x1) AS adding
WITH found + adding AS found
OPTIONAL MATCH (x2:`Npc`) WHERE x2.name IN $names
WITH found, x2
WITH found, collect(x2) AS adding
WITH found + adding AS found
UNWIND range(0, size(found) - 1) AS at
WITH found[at] AS n, at
OPTIONAL MATCH (n)-[r]-(o) WHERE $include_archived OR o._archived_at IS NULL
WITH n, at, r ORDER BY id(r)
WITH n, at, collect(r) AS rels
WITH n, at, size(rels) > $per_node AS more, rels[0..$per_node] AS page
UNWIND CASE WHEN size(page) = 0 THEN [null] ELSE page END AS r
WITH n, at, more, r, CASE WHEN r IS NULL THEN null WHEN id(startNode(r)) = id(n) THEN endNode(r) ELSE startNode(r) END AS m
RETURN at, id(n) AS id, labels(n) AS labels, properties(n) AS props, n.name AS name, n._alias_label AS alias_label, n._alias_of AS alias_key, n._archived_at IS NOT NULL AS archived, more,
       id(r) AS rid, type(r) AS rtype, id(startNode(r)) AS rstart, properties(r) AS rprops,
       id(m) AS mid, m.name AS mname, m._key AS mkey

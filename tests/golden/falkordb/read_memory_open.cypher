MATCH (n:`Person`) WHERE n._key IN $name_keys
OPTIONAL MATCH (n)-[r]-(o) WHERE $include_archived OR o._archived_at IS NULL
WITH n, r ORDER BY id(r)
WITH n, collect(r) AS rels
WITH n, size(rels) > $per_node AS more, rels[0..$per_node] AS page
UNWIND CASE WHEN size(page) = 0 THEN [null] ELSE page END AS r
WITH n, more, r, CASE WHEN r IS NULL THEN null WHEN id(startNode(r)) = id(n) THEN endNode(r) ELSE startNode(r) END AS m
RETURN 0 AS part, n._key AS key, id(n) AS id, labels(n) AS labels, properties(n) AS props, n.name AS name, n._alias_label AS alias_label, n._alias_of AS alias_key, n._archived_at IS NOT NULL AS archived, more,
       id(r) AS rid, type(r) AS rtype, id(startNode(r)) AS rstart, properties(r) AS rprops,
       id(m) AS mid, m.name AS mname, m._key AS mkey
UNION ALL
MATCH (n:`Organization`) WHERE n._key IN $name_keys
OPTIONAL MATCH (n)-[r]-(o) WHERE $include_archived OR o._archived_at IS NULL
WITH n, r ORDER BY id(r)
WITH n, collect(r) AS rels
WITH n, size(rels) > $per_node AS more, rels[0..$per_node] AS page
UNWIND CASE WHEN size(page) = 0 THEN [null] ELSE page END AS r
WITH n, more, r, CASE WHEN r IS NULL THEN null WHEN id(startNode(r)) = id(n) THEN endNode(r) ELSE startNode(r) END AS m
RETURN 1 AS part, n._key AS key, id(n) AS id, labels(n) AS labels, properties(n) AS props, n.name AS name, n._alias_label AS alias_label, n._alias_of AS alias_key, n._archived_at IS NOT NULL AS archived, more,
       id(r) AS rid, type(r) AS rtype, id(startNode(r)) AS rstart, properties(r) AS rprops,
       id(m) AS mid, m.name AS mname, m._key AS mkey
UNION ALL
MATCH (n:`Npc`) WHERE n.name IN $names
OPTIONAL MATCH (n)-[r]-(o) WHERE $include_archived OR o._archived_at IS NULL
WITH n, r ORDER BY id(r)
WITH n, collect(r) AS rels
WITH n, size(rels) > $per_node AS more, rels[0..$per_node] AS page
UNWIND CASE WHEN size(page) = 0 THEN [null] ELSE page END AS r
WITH n, more, r, CASE WHEN r IS NULL THEN null WHEN id(startNode(r)) = id(n) THEN endNode(r) ELSE startNode(r) END AS m
RETURN 2 AS part, n._key AS key, id(n) AS id, labels(n) AS labels, properties(n) AS props, n.name AS name, n._alias_label AS alias_label, n._alias_of AS alias_key, n._archived_at IS NOT NULL AS archived, more,
       id(r) AS rid, type(r) AS rtype, id(startNode(r)) AS rstart, properties(r) AS rprops,
       id(m) AS mid, m.name AS mname, m._key AS mkey

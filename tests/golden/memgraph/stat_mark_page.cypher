MATCH (n) WHERE id(n) > $cursor WITH n LIMIT $limit
WITH collect(n) AS page
FOREACH (n IN [n IN page WHERE any(l IN labels(n) WHERE l IN $labels)] | SET n._due = 1)
WITH page, size(page) AS walked,
     reduce(m = null, n IN page | CASE WHEN m IS NULL OR id(n) > m THEN id(n) ELSE m END) AS last
UNWIND (CASE WHEN walked = 0 THEN [null] ELSE page END) AS n
OPTIONAL MATCH (n)-[r]->() WHERE type(r) IN $types
WITH last, walked, collect(r) AS rels
FOREACH (r IN rels | SET r._due = 1)
RETURN last, walked

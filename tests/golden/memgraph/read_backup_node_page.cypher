// index: none: Memgraph has no scan by an id range: each backup page reads every node and sorts those past its cursor (a backup of N nodes costs N per page; FalkorDB's seeks)
MATCH (n) WHERE id(n) > $cursor WITH n ORDER BY id(n) LIMIT $limit
RETURN id(n) AS id, labels(n) AS labels, properties(n) AS props

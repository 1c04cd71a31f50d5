// index: none: the graph's node count, asked only before a FalkorDB page by id (read_cypher.resume_by_own_scan), never on Memgraph
MATCH (n) RETURN count(n) AS count

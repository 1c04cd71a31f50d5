// index: id
UNWIND $ids AS i
MATCH (n)-[r]->(m) WHERE id(n) = i
RETURN id(r) AS rid, type(r) AS type, id(n) AS start, id(m) AS end, m.name AS end_name, properties(r) AS props
ORDER BY rid

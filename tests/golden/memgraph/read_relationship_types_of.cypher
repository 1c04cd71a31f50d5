// index: id
UNWIND $ids AS i
MATCH (n)-[r]-() WHERE id(n) = i
RETURN DISTINCT type(r) AS type ORDER BY type

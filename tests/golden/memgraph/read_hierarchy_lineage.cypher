// index: id
MATCH (n) WHERE id(n) = $id
OPTIONAL MATCH (n)-[:`CHILD_OF`]->(parent)
WITH n, collect(DISTINCT id(parent)) AS parents
OPTIONAL MATCH (n)-[:`CHILD_OF`*]->(up)
RETURN parents, collect(DISTINCT id(up)) AS ancestors

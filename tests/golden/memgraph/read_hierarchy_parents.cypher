// index: id
MATCH (c)-[:`CHILD_OF`]->(x) WHERE id(c) = $id
RETURN id(x) AS id, labels(x) AS labels, properties(x) AS props, x._archived_at IS NOT NULL AS archived
ORDER BY id

// index: id
MATCH (x)-[:`CHILD_OF`]->(p) WHERE id(p) = $id
RETURN id(x) AS id, labels(x) AS labels, properties(x) AS props, x._archived_at IS NOT NULL AS archived
ORDER BY id

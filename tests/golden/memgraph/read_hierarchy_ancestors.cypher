// index: id
MATCH path = (c)-[:`CHILD_OF`*1..101]->(x) WHERE id(c) = $id
RETURN id(x) AS id, labels(x) AS labels, properties(x) AS props, x._archived_at IS NOT NULL AS archived, length(path) AS depth
ORDER BY depth, id

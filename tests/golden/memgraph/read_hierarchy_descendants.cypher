// index: id
MATCH path = (x)-[:`CHILD_OF`*1..101]->(p) WHERE id(p) = $id
RETURN id(x) AS id, labels(x) AS labels, properties(x) AS props, x._archived_at IS NOT NULL AS archived, length(path) AS depth,
       [n IN nodes(path) | id(n)] AS path_ids, [n IN nodes(path) | n.name] AS path_names

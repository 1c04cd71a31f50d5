UNWIND $ids AS i
MATCH (c) WHERE id(c) = i
WITH c, i
MATCH (c)-[:`CHILD_OF`]->(x) WHERE $include_archived OR x._archived_at IS NULL
RETURN i AS id, id(x) AS parent, x.name AS name

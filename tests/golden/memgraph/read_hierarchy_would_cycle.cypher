// index: id
MATCH (c) WHERE id(c) = $child
MATCH (p) WHERE id(p) = $parent
OPTIONAL MATCH loop = (p)-[:`CHILD_OF`*]->(c)
WITH c, p, count(loop) AS loops
RETURN id(c) = id(p) OR loops > 0 AS cycle

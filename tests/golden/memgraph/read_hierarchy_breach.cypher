// index: :Person(_key)
// index: :Organization(_key)
MATCH (child:`Person` {_key: $child_key})
MATCH (parent:`Organization` {_key: $parent_key})
OPTIONAL MATCH loop = (parent)-[:`CHILD_OF`*]->(child)
WITH child, parent, count(loop) AS loops
OPTIONAL MATCH (child)-[:`CHILD_OF`]->(up) WHERE id(up) <> id(parent)
RETURN id(child) = id(parent) OR loops > 0 AS cycle, collect(up._key) AS parents

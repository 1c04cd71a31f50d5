UNWIND $ids AS i
MATCH (n) WHERE id(n) = i AND n.name IN $names
DETACH DELETE n
RETURN count(*) AS deleted

UNWIND $ids AS i
MATCH (n) WHERE id(n) = i AND n.name IN $names
OPTIONAL MATCH (n)-[rel]-()
WITH n, collect(DISTINCT type(rel)) AS types
WHERE all(t IN types WHERE t IN $allowed_types)
DETACH DELETE n
RETURN count(*) AS deleted

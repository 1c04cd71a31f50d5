MATCH (n:`Npc` {_key: $key})
OPTIONAL MATCH (n)-[rel]-()
WITH n, collect(DISTINCT type(rel)) AS types
WHERE all(t IN types WHERE t IN $allowed_types)
DETACH DELETE n
RETURN count(*) AS deleted

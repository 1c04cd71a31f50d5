MATCH (n:`Npc` {_key: $key})
DETACH DELETE n
RETURN count(*) AS deleted

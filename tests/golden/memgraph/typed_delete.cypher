MATCH (n:`Npc` {`name`: $key_0})
DETACH DELETE n
RETURN count(*) AS deleted

MATCH (a)-[r:`KNOWS`]->(b)
WHERE id(a) = $from_id AND a.name = $from_name AND id(b) = $to_id AND b.name = $to_name
DELETE r

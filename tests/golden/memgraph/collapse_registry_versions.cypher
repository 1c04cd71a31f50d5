MATCH (v:WriteGateRegistry {name: 'registry'})
WITH v ORDER BY coalesce(v.version, 0) DESC
WITH collect(v) AS found
UNWIND found[1..] AS extra
DELETE extra

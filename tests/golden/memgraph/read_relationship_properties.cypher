// index: :Person(_key)
// index: :Organization(_key)
UNWIND $pairs AS p
MATCH (a:`Person` {_key: p.from_key})-[r:`WORKS_FOR`]->(b:`Organization` {_key: p.to_key})
RETURN p.from_key AS from_key, p.to_key AS to_key, properties(r) AS props

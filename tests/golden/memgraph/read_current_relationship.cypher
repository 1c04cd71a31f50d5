// index: :Person(_key)
// index: :Organization(_key)
OPTIONAL MATCH (a:`Person` {_key: $from_key})
OPTIONAL MATCH (b:`Organization` {_key: $to_key})
OPTIONAL MATCH (a)-[r:`WORKS_FOR`]->(b)
RETURN a IS NOT NULL AS from_found, b IS NOT NULL AS to_found, a._alias_of AS from_alias,
       b._alias_of AS to_alias, CASE WHEN r IS NULL THEN null ELSE properties(r) END AS props

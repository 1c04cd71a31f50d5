// index: :Person(_key)
MATCH (n:`Person` {_key: $key})
MATCH (n)-[r]-()
RETURN DISTINCT type(r) AS type ORDER BY type

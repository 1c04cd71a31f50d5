// index: :Person(_key)
MATCH (n:`Person` {_key: $key})
RETURN id(n) AS id, properties(n) AS props

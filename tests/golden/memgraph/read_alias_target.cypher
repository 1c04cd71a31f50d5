// index: :Person(_key)
MATCH (n:`Person` {_key: $key})
RETURN n._alias_label AS label, n._alias_of AS key, properties(n) AS props

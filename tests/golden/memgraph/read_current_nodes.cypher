// index: :Person(_key)
UNWIND $keys AS k
MATCH (n:`Person` {_key: k})
RETURN k AS key, properties(n) AS props

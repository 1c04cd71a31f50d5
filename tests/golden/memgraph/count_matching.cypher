// index: :Person(_key)
MATCH (n:`Person` {_key: $key})
RETURN count(n) AS count

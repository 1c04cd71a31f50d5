MATCH (n:`Person` {_key: $key})
RETURN n._stub = true AS stub

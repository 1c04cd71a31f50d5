UNWIND $keys AS k
MATCH (n:`Person` {_key: k})
WHERE n._alias_of IS NOT NULL
RETURN k AS key

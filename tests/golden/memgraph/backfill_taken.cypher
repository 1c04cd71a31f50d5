// index: :Person(_key)
MATCH (n:`Person`) WHERE n._key IN $keys RETURN n._key AS key

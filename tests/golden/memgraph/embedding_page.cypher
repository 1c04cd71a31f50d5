// index: :Person(_key)
// index: :_Embedding(key)
MATCH (n:`Person`) WHERE (n._key > $after AND n._key + '' > $after) AND n._alias_of IS NULL
WITH n ORDER BY n._key LIMIT $limit
OPTIONAL MATCH (o:_Embedding {key: n._key, label: 'Person'})
RETURN n._key AS key, properties(n) AS props, collect(o.model) AS models
ORDER BY key

UNWIND $embeddings AS e
OPTIONAL MATCH (o:_Embedding {key: e.key, label: e.label})
WITH e, collect(o) AS olds
WITH e, olds, [o IN olds WHERE o.model = $embedder.model | o.text_hash] AS had, [t IN e.texts | t.hash] AS hashes
FOREACH (o IN [o IN olds WHERE (o.field IN e.fields AND NOT o.text_hash IN hashes) OR o.text_hash IN coalesce(e.drop, []) OR (o.text_hash IN hashes AND o.model <> $embedder.model)] | DELETE o)
FOREACH (t IN [t IN e.texts WHERE NOT t.hash IN had] | CREATE (:_Embedding {label: e.label, key: e.key, field: t.field, text_hash: t.hash, vector: vecf32(t.vector), provider: $embedder.provider, model: $embedder.model, dimension: $embedder.dimension, embedded_at: $embedder.at}))
WITH count(*) AS _embedded
RETURN _embedded

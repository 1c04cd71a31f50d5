// index: id
MATCH (m)-[r]-(x) WHERE id(m) = $merged_id
OPTIONAL MATCH (s)-[q]-(x)
WHERE id(s) = $survivor_id AND type(q) = type(r) AND (id(startNode(q)) = id(s)) = (id(startNode(r)) = id(m))
RETURN DISTINCT id(r) AS id, type(r) AS type, id(startNode(r)) = id(m) AS outgoing, id(x) AS other, properties(r) AS props, properties(q) AS twin, labels(x)[0] AS other_label, x._key AS other_key

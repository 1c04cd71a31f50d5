CALL db.idx.vector.queryNodes('_Embedding', 'vector', $k, vecf32($vector)) YIELD node, score
WITH node, 1 - score AS similarity
RETURN node.label AS label, node.key AS key, similarity

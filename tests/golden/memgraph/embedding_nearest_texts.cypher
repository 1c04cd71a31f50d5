// index: vector write_gate_embeddings
CALL vector_search.search('write_gate_embeddings', $k, $vector) YIELD node, similarity
RETURN node.label AS label, node.key AS key, similarity

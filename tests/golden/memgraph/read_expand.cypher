UNWIND $ids AS i
MATCH (n) WHERE id(n) = i
OPTIONAL MATCH (n)-[r]-(m)
RETURN id(n) AS id, labels(n) AS labels, properties(n) AS props,
       id(r) AS rid, type(r) AS rtype, id(startNode(r)) AS rstart, properties(r) AS rprops,
       id(m) AS mid, labels(m) AS mlabels, properties(m) AS mprops

UNWIND $rows AS row WITH row, row.from AS start_id, row.to AS end_id
MATCH (a) WHERE id(a) = start_id MATCH (b) WHERE id(b) = end_id
CREATE (a)-[r:`WORKS_FOR`]->(b) SET r = row.props
RETURN count(r) AS created

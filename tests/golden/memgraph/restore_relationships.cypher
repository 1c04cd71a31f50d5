UNWIND $rows AS row MATCH (a) WHERE id(a) = row.from MATCH (b) WHERE id(b) = row.to
CREATE (a)-[r:`WORKS_FOR`]->(b) SET r = row.props
RETURN count(r) AS created

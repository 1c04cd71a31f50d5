UNWIND $rows AS row CREATE (n) SET n = row.props
RETURN row.pos AS pos, id(n) AS id

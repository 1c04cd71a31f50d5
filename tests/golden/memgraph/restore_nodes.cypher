UNWIND $rows AS row CREATE (n:`Person`:`Employee`) SET n = row.props
RETURN row.pos AS pos, id(n) AS id

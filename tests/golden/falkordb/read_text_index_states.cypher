CALL db.indexes() YIELD label, types, status RETURN label, types, status

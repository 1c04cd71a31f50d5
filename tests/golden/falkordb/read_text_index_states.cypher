CALL db.indexes() YIELD label, types, status WHERE label IN $labels RETURN label, types, status

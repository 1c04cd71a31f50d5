MATCH ()-[r:`KNOWS`]->() RETURN count(r) AS count

MATCH (n) RETURN count(n) AS count

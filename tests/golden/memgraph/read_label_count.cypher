MATCH (n:`Person`) RETURN count(n) AS count

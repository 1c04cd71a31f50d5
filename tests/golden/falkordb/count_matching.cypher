MATCH (n:`Person` {`name`: $key_0})
RETURN count(n) AS count

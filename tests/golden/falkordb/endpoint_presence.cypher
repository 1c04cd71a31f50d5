OPTIONAL MATCH (a:`Person` {`name`: $from_0})
WITH count(a) AS from_found
OPTIONAL MATCH (b:`Organization` {`name`: $to_0, `country`: $to_1})
RETURN from_found, count(b) AS to_found

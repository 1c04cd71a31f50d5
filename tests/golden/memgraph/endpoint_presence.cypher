OPTIONAL MATCH (a:`Person` {_key: $from_key})
WITH count(a) AS from_found
OPTIONAL MATCH (b:`Organization` {_key: $to_key})
RETURN from_found, count(b) AS to_found

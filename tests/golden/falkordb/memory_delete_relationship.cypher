MATCH (a:`Person` {`name`: $from_0})-[r:`KNOWS`]->(b:`Organization` {`name`: $to_0, `country`: $to_1})
DELETE r

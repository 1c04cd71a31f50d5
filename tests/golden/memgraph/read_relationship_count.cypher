// index: none: a count of the type's relationships, for describe_schema
MATCH ()-[r:`KNOWS`]->() RETURN count(r) AS count

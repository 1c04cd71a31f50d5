// index: none: a count of the label's nodes, for describe_schema and a re-embedding's progress: Memgraph reads the label's index, one entry per node
MATCH (n:`Person`) RETURN count(n) AS count

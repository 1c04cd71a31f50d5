MATCH (n:`Person`) WHERE n._search CONTAINS $old
SET n._search = replace(n._search, $old, $new)
RETURN count(n) AS changed

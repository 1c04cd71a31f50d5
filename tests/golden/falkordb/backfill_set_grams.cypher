UNWIND $rows AS row
MATCH (n) WHERE id(n) = row.id AND n._search = row.text
SET n._grams = row.grams
RETURN count(n) AS done

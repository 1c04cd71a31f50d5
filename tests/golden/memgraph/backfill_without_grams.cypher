// index: :Person(_key)
MATCH (n:`Person`) WHERE (n._key > $after AND n._key + '' > $after) AND n._grams IS NULL AND n._search IS NOT NULL
WITH n ORDER BY n._key LIMIT 2000
RETURN id(n) AS id, n._search AS text, n._key AS position

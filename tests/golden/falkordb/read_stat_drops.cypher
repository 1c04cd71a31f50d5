MATCH (t:_StatDrop)
WITH t LIMIT $chunk
RETURN id(t) AS id, t.s AS old

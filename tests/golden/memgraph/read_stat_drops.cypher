// index: none: the statistics' drops not yet folded (:_StatDrop), read a chunk at a time, a few nodes whatever the graph holds
MATCH (t:_StatDrop)
WITH t LIMIT $chunk
RETURN id(t) AS id, t.s AS old

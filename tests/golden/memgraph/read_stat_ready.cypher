// index: none: one node (:_StatMeta), a few nodes whatever the graph holds
MATCH (m:_StatMeta) RETURN m.ready AS ready, m.cursor AS cursor

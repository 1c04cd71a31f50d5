MATCH (m:_StatMeta) RETURN m.ready AS ready, m.cursor AS cursor

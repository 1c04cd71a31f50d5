MERGE (m:_StatMeta {k: 'meta'})
SET m.cursor = $cursor, m.ready = $ready

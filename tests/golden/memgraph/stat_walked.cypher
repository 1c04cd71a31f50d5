MERGE (m:_StatMeta)
SET m.cursor = $cursor, m.ready = $ready

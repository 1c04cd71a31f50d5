MERGE (t0:`Location` {`name`: $to0_0})
ON CREATE SET t0._stub = true, t0.confidence = $confidence, t0.source = $source, t0.extraction_method = $extraction_method, t0.write_gate_version = $write_gate_version, t0.last_updated = $last_updated, t0.written_by = $written_by
MERGE (t1:`Faction` {`name`: $to1_0})
ON CREATE SET t1._stub = true, t1.confidence = $confidence, t1.source = $source, t1.extraction_method = $extraction_method, t1.write_gate_version = $write_gate_version, t1.last_updated = $last_updated, t1.written_by = $written_by
MATCH (n:`Npc` {`name`: $key_0})
SET n += $properties, n.confidence = $confidence, n.source = $source, n.extraction_method = $extraction_method, n.write_gate_version = $write_gate_version, n.last_updated = $last_updated, n.written_by = $written_by, n._search = CASE WHEN coalesce(n._search, '') CONTAINS $search THEN n._search WHEN size(coalesce(n._search, '')) + size($search) > 8192 THEN null ELSE coalesce(n._search, '') + $search END, n._stub = null
WITH n, t0, t1
OPTIONAL MATCH (n)-[old0:`LOCATED_IN`]->(x0) WHERE id(x0) <> id(t0)
WITH n, t0, t1, collect(old0) AS stale0
FOREACH (o IN stale0 | DELETE o)
MERGE (n)-[r0:`LOCATED_IN`]->(t0)
ON CREATE SET r0.weight = 1.0
SET r0.confidence = $confidence, r0.source = $source, r0.extraction_method = $extraction_method, r0.write_gate_version = $write_gate_version, r0.last_updated = $last_updated, r0.written_by = $written_by
WITH n, t0, t1
OPTIONAL MATCH (n)-[old1:`MEMBER_OF`]->(x1) WHERE id(x1) <> id(t1)
WITH n, t0, t1, collect(old1) AS stale1
FOREACH (o IN stale1 | DELETE o)
MERGE (n)-[r1:`MEMBER_OF`]->(t1)
ON CREATE SET r1.weight = 1.0
SET r1.confidence = $confidence, r1.source = $source, r1.extraction_method = $extraction_method, r1.write_gate_version = $write_gate_version, r1.last_updated = $last_updated, r1.written_by = $written_by
RETURN count(n) AS written

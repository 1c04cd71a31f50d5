UNWIND $entries AS entry
MERGE (s:Schema {name: entry.name})
SET s += entry
WITH count(s) AS loaded
MERGE (v:WriteGateRegistry {name: 'registry'})
SET v.version = coalesce(v.version, 0) + 1, v.changed_at = $changed_at
RETURN loaded, v.version AS version

// index: :Person(_due) — every counted node of the label, sorted for the newest: only when the stored newest was deleted or archived
MATCH (n:`Person`) WHERE n._s <> '' AND n._due = 0 AND n._alias_of IS NULL AND n.last_updated IS NOT NULL
WITH n ORDER BY n.last_updated DESC, n._key DESC LIMIT 1
RETURN n.last_updated AS at, n._key AS key, n.name AS name

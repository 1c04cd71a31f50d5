UNWIND $entries AS entry
MERGE (s:Schema {name: entry.name})
SET s += entry

MERGE (m:WriteGateMigration {name: $name})
SET m.applied_at = $applied_at

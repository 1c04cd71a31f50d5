// index: none: the migrations applied (:WriteGateMigration), a few nodes whatever the graph holds
MATCH (m:WriteGateMigration) RETURN m.name AS name ORDER BY name

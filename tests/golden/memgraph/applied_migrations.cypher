MATCH (m:WriteGateMigration) RETURN m.name AS name ORDER BY name

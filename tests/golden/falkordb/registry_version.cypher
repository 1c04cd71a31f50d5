MATCH (v:WriteGateRegistry {name: 'registry'}) RETURN v.version AS version

// index: :WriteGateRegistry(name)
MATCH (v:WriteGateRegistry {name: 'registry'}) RETURN max(v.version) AS version

MATCH (s:Schema) WHERE s.name IN $names AND s.origin = 'operator'
RETURN s.name AS name ORDER BY name

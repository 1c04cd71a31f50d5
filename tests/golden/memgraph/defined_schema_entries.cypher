// index: :Schema(name)
MATCH (s:Schema) WHERE s.name IN $names AND coalesce(s.derived, false) = false
RETURN s.name AS name ORDER BY name

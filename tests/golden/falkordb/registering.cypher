MATCH (s:Schema {allowed: true})
WHERE toLower(replace(s.name, ':', '')) IN $names
   OR any(a IN coalesce(s.absorbs, []) WHERE toLower(replace(a, ':', '')) IN $names)
RETURN count(s) AS found

// index: none: the registry's entries (:Schema), a few nodes whatever the graph holds
MATCH (s:Schema {allowed: true})
RETURN s.name AS label, s.required_properties AS required_properties, s.absorbs AS remaps_from,
       s.kind AS kind, s.merge_keys AS merge_keys, s.property_types AS property_types,
       s.fallback AS fallback, s.from_labels AS from_labels, s.to_labels AS to_labels,
       s.description AS description, s.typed_tools AS typed_tools,
       s.additional_properties AS additional_properties, s.undeclared_properties AS undeclared_properties,
       s.conflict_policy AS conflict_policy, s.half_life_days AS half_life_days, s.embed AS embed
ORDER BY label

MATCH (n:`Person`) WHERE n._key IN $name_keys RETURN id(n) AS id, n.name AS name, labels(n) AS labels, n._alias_label AS alias_label, n._alias_of AS alias_key, n._key AS key
UNION ALL
MATCH (n:`Organization`) WHERE n._key IN $name_keys RETURN id(n) AS id, n.name AS name, labels(n) AS labels, n._alias_label AS alias_label, n._alias_of AS alias_key, n._key AS key
UNION ALL
MATCH (n:`Npc`) WHERE n.name IN $names RETURN id(n) AS id, n.name AS name, labels(n) AS labels, n._alias_label AS alias_label, n._alias_of AS alias_key, n._key AS key

// index: none: the statistics' oldest and newest per label (:_StatEnd), a few nodes whatever the graph holds
MATCH (x:_StatEnd)
RETURN x.k AS k, x.part AS part, x.end AS end, x.at AS at, x.key AS key, x.entity_name AS name, x.stale AS stale

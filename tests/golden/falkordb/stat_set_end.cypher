MATCH (x:_StatEnd {k: $k}) WHERE x.stale
SET x.at = $at, x.key = $key, x.entity_name = $name, x.stale = false

MATCH (n:`Person` {name: $name})
SET n.observations = [o IN coalesce(n.observations, []) WHERE NOT o IN $observations],
    n.last_updated = $last_updated

MATCH (n) WHERE id(n) = $id AND n.name = $name
WITH n, coalesce(n.observations, []) AS obs, coalesce(n._f_observations, []) AS folded
WITH n, obs, folded, [i IN range(0, size(obs) - 1) WHERE NOT obs[i] IN $observations] AS keep
WHERE size(keep) < size(obs)
SET n.observations = [i IN keep | obs[i]],
    n._f_observations = [i IN keep | folded[i]],
    n._p_observations = $claim,
    n.last_updated = $last_updated, n.updated_by = $updated_by
WITH n
SET n._search = reduce(s = '', k IN [k IN keys(n) WHERE k STARTS WITH '_f_'] | reduce(t = s, x IN properties(n)[k] | t + '\n' + coalesce(x, '')))

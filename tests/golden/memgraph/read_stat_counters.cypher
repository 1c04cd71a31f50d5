// index: none: the statistics' counters, one per label or type and value counted (agents, sources, ten confidence buckets, days), a few nodes whatever the graph holds
MATCH (c:_StatCount) WHERE c.count <> 0
RETURN c.k AS k, c.kind AS kind, c.part AS part, c.dim AS dim, c.value AS value, c.count AS count, c.total AS total, c.low AS low, c.high AS high, c.low_stale OR c.high_stale AS stale

// index: :Person(_due) — every counted node of the label, filtered to the bucket: only when a bucket's stored lowest or highest went
MATCH (v:`Person`) WHERE v._s <> '' AND v._due = 0 AND CASE WHEN v.confidence IS NULL THEN null WHEN v.confidence >= 1 THEN 9 WHEN v.confidence <= 0 THEN 0 ELSE toInteger(v.confidence * 10) END = $bucket
WITH collect(v.confidence) AS values
WITH values, reduce(m = null, x IN values | CASE WHEN m IS NULL OR x < m THEN x ELSE m END) AS low,
     reduce(m = null, x IN values | CASE WHEN m IS NULL OR x > m THEN x ELSE m END) AS high
RETURN low, size([x IN values WHERE x = low]) AS at_low, high, size([x IN values WHERE x = high]) AS at_high

MATCH (h:WriteGateChange)
WHERE ($labels IS NULL OR h.label IN $labels) AND h.at <= $horizon
  AND ($after_at IS NULL OR h.at > $after_at OR (h.at = $after_at AND h.change_id > $after_id))
WITH DISTINCT h.at AS at, h.change_id AS change_id
ORDER BY at, change_id
LIMIT $limit
MATCH (r:WriteGateChange) WHERE r.at = at AND r.change_id = change_id AND ($labels IS NULL OR r.label IN $labels)
WITH at, change_id, collect(properties(r)) AS records
RETURN at, change_id, records
ORDER BY at, change_id

MATCH (h:WriteGateChange)
WHERE ($labels IS NULL OR h.label IN $labels)
WITH DISTINCT h.at AS at, h.change_id AS change_id
ORDER BY at DESC, change_id DESC
LIMIT $limit
MATCH (r:WriteGateChange) WHERE r.at = at AND r.change_id = change_id AND ($labels IS NULL OR r.label IN $labels)
WITH at, change_id, collect(properties(r)) AS records
RETURN at, change_id, records
ORDER BY at, change_id

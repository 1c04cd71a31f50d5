MATCH (h:WriteGateChange)
WHERE ($labels IS NULL OR h.label IN $labels)
WITH DISTINCT h.at AS at, h.change_id AS change_id
ORDER BY at DESC, change_id DESC
LIMIT $limit
WITH collect(change_id) AS ids, min(at) AS low, max(at) AS high
MATCH (r:WriteGateChange) WHERE r.at >= low AND r.at <= high AND r.change_id IN ids AND ($labels IS NULL OR r.label IN $labels)
WITH r.at AS at, r.change_id AS change_id, collect(properties(r)) AS records
RETURN at, change_id, records
ORDER BY at, change_id

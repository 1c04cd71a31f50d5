MATCH (h:WriteGateChange)
WHERE h.at >= $after_at AND h.at <= $horizon AND ($labels IS NULL OR h.label IN $labels)
  AND (h.at > $after_at OR h.change_id > $after_id)
WITH DISTINCT h.at AS at, h.change_id AS change_id
ORDER BY at, change_id
LIMIT $limit
WITH collect(change_id) AS ids, min(at) AS low, max(at) AS high
MATCH (r:WriteGateChange) WHERE r.at >= low AND r.at <= high AND r.change_id IN ids AND ($labels IS NULL OR r.label IN $labels)
WITH r.at AS at, r.change_id AS change_id, collect(properties(r)) AS records
RETURN at, change_id, records
ORDER BY at, change_id

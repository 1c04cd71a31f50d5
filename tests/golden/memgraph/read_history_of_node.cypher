MATCH (h:WriteGateChange)
WHERE h.subject = 'node' AND h.label = $label AND h.key = $key
  AND ($property IS NULL OR h.property = $property)
  AND ($since IS NULL OR h.at >= $since)
  AND ($after_at IS NULL OR h.at < $after_at OR (h.at = $after_at AND (h.change_id < $after_id OR (h.change_id = $after_id AND h.property < $after_property))))
RETURN properties(h) AS change, h.at AS at, h.change_id AS change_id, h.property AS property
ORDER BY at DESC, change_id DESC, property DESC
LIMIT $limit

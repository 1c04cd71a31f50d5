// index: :WriteGateChange(key)
MATCH (h:WriteGateChange)
WHERE h.subject = 'node' AND h.label = $label AND h.key = $key
  AND ($property IS NULL OR h.property = $property OR $property IN coalesce(h.properties, []))
  AND ($since IS NULL OR (h.at >= $since AND h.at + '' >= $since))
  AND ($after_seq IS NULL OR coalesce(h.seq, h.at) < $after_seq OR (coalesce(h.seq, h.at) = $after_seq AND (h.change_id + '' < $after_id OR (h.change_id + '' = $after_id AND (h.properties IS NOT NULL OR h.property < $after_property)))))
RETURN properties(h) AS change, coalesce(h.seq, h.at) AS seq, h.change_id AS change_id, coalesce(h.property, '') AS property
ORDER BY seq DESC, change_id DESC, property DESC
LIMIT $limit

UNWIND $ids AS tid
MATCH (t:_StatDrop) WHERE id(t) = tid
WITH collect(t) AS gone
WITH gone, size(gone) = size($ids) AS whole
FOREACH (t IN CASE WHEN whole THEN gone ELSE [] END | DELETE t)
FOREACH (d IN CASE WHEN whole THEN $deltas ELSE [] END |
  MERGE (c:_StatCount {k: d.k})
  ON CREATE SET c.kind = d.kind, c.part = d.part, c.dim = d.dim, c.value = d.value, c.count = 0, c.total = 0, c.at_low = 0, c.at_high = 0, c.low_stale = false, c.high_stale = false
  FOREACH (v IN CASE WHEN d.dim = 'confidence' THEN [{low: CASE WHEN (d.low IS NOT NULL AND (c.low IS NULL OR (c.count - size(d.removed) <= 0) OR d.low < c.low)) THEN d.low ELSE c.low END, at_low: CASE WHEN (d.low IS NOT NULL AND (c.low IS NULL OR (c.count - size(d.removed) <= 0) OR d.low < c.low)) THEN d.low_n ELSE (c.at_low - size([x IN d.removed WHERE x = c.low]) + CASE WHEN (d.low IS NOT NULL AND d.low = c.low) THEN d.low_n ELSE 0 END) END, low_stale: CASE WHEN (d.low IS NOT NULL AND (c.low IS NULL OR (c.count - size(d.removed) <= 0) OR d.low < c.low)) THEN false ELSE c.low_stale OR coalesce(any(x IN d.removed WHERE x < c.low), false) OR (c.low IS NOT NULL AND (c.at_low - size([x IN d.removed WHERE x = c.low]) + CASE WHEN (d.low IS NOT NULL AND d.low = c.low) THEN d.low_n ELSE 0 END) <= 0) END, high: CASE WHEN (d.high IS NOT NULL AND (c.high IS NULL OR (c.count - size(d.removed) <= 0) OR d.high > c.high)) THEN d.high ELSE c.high END, at_high: CASE WHEN (d.high IS NOT NULL AND (c.high IS NULL OR (c.count - size(d.removed) <= 0) OR d.high > c.high)) THEN d.high_n ELSE (c.at_high - size([x IN d.removed WHERE x = c.high]) + CASE WHEN (d.high IS NOT NULL AND d.high = c.high) THEN d.high_n ELSE 0 END) END, high_stale: CASE WHEN (d.high IS NOT NULL AND (c.high IS NULL OR (c.count - size(d.removed) <= 0) OR d.high > c.high)) THEN false ELSE c.high_stale OR coalesce(any(x IN d.removed WHERE x > c.high), false) OR (c.high IS NOT NULL AND (c.at_high - size([x IN d.removed WHERE x = c.high]) + CASE WHEN (d.high IS NOT NULL AND d.high = c.high) THEN d.high_n ELSE 0 END) <= 0) END}] ELSE [] END |
    SET c.low = v.low, c.at_low = v.at_low, c.low_stale = v.low_stale, c.high = v.high, c.at_high = v.at_high, c.high_stale = v.high_stale)
  SET c.count = c.count + d.count, c.total = c.total + d.total)
FOREACH (e IN CASE WHEN whole THEN $ends ELSE [] END |
  MERGE (x:_StatEnd {k: e.k})
  ON CREATE SET x.part = e.part, x.end = e.end
  SET x.stale = CASE WHEN (e.at IS NOT NULL AND (x.at IS NULL OR CASE e.end WHEN 'newest' THEN e.at > x.at OR (e.at = x.at AND e.key > x.key) ELSE e.at < x.at OR (e.at = x.at AND e.key < x.key) END OR (e.at = x.at AND e.key = x.key))) THEN false ELSE coalesce(x.stale, false) OR (x.at IS NOT NULL AND any(r IN e.removed WHERE r[0] = x.at AND r[1] = x.key)) END,
      x.entity_name = CASE WHEN (e.at IS NOT NULL AND (x.at IS NULL OR CASE e.end WHEN 'newest' THEN e.at > x.at OR (e.at = x.at AND e.key > x.key) ELSE e.at < x.at OR (e.at = x.at AND e.key < x.key) END OR (e.at = x.at AND e.key = x.key))) THEN e.name ELSE x.entity_name END,
      x.key = CASE WHEN (e.at IS NOT NULL AND (x.at IS NULL OR CASE e.end WHEN 'newest' THEN e.at > x.at OR (e.at = x.at AND e.key > x.key) ELSE e.at < x.at OR (e.at = x.at AND e.key < x.key) END OR (e.at = x.at AND e.key = x.key))) THEN e.key ELSE x.key END,
      x.at = CASE WHEN (e.at IS NOT NULL AND (x.at IS NULL OR CASE e.end WHEN 'newest' THEN e.at > x.at OR (e.at = x.at AND e.key > x.key) ELSE e.at < x.at OR (e.at = x.at AND e.key < x.key) END OR (e.at = x.at AND e.key = x.key))) THEN e.at ELSE x.at END)
RETURN whole

MATCH (c:_StatCount {k: $k})
SET c.low = $low, c.at_low = $at_low, c.low_stale = false, c.high = $high, c.at_high = $at_high, c.high_stale = false

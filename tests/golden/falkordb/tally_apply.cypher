MERGE (m:_StatMeta {k: 'meta'})
WITH m WHERE coalesce(m.tally_seq, '') = $read_from.seq AND coalesce(m.tally_id, '') = $read_from.change_id AND coalesce(m.held_at, '') = $read_from.at AND coalesce(m.held_id, '') = $read_from.conflict_id
SET m.tally_seq = $moved_to.seq, m.tally_id = $moved_to.change_id, m.held_at = $moved_to.at, m.held_id = $moved_to.conflict_id
FOREACH (t IN $tallies |
  MERGE (a:_AgentTally {agent: t.agent})
  ON CREATE SET a.writes = 0, a.held = 0
  SET a.writes = a.writes + t.writes, a.held = a.held + t.held,
      a.last_at = CASE WHEN a.last_at IS NULL OR t.last_at > a.last_at THEN t.last_at ELSE a.last_at END)
RETURN count(m) AS applied

// index: none: one node (:_StatMeta), a few nodes whatever the graph holds
MATCH (m:_StatMeta)
RETURN m.tally_seq AS seq, m.tally_id AS change_id, m.held_at AS at, m.held_id AS conflict_id

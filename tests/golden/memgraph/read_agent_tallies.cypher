// index: none: the statistics' meta node and one :_AgentTally per agent that ever wrote, a few nodes whatever the graph holds
OPTIONAL MATCH (m:_StatMeta)
WITH m
OPTIONAL MATCH (a:_AgentTally)
RETURN m.tally_seq AS seq, m.tally_id AS change_id, m.held_at AS at, m.held_id AS conflict_id,
       collect({agent: a.agent, writes: a.writes, held: a.held, last_at: a.last_at}) AS tallies

"""The statements of each agent's write tallies (core/agent_tallies.py says how they work): the change records and
the conflict records read oldest first, a window of their numeric `seq_n` index at a time (core/feed_windows.py),
a lookup of each change's other records by their `at` (an exact index equality), and one statement applying a
page's tallies only if the cursors it read from are still the stored ones.
"""

from write_gate.core.cypher.ranges import past_index
from write_gate.core.cypher.stat_counts import META_LABEL, TALLY_LABEL
from write_gate.core.cypher.statement import Statement
from write_gate.core.feed_windows import SEQ_NUMBER
from write_gate.core.history import CHANGE_LABEL, CONFLICT_LABEL
from write_gate.core.stat_counts import META_KEY

_CHANGE_WINDOW = f"h.{SEQ_NUMBER} >= $low AND h.{SEQ_NUMBER} <= $high"
_CONFLICT_WINDOW = f"c.{SEQ_NUMBER} >= $low AND c.{SEQ_NUMBER} <= $high"

# Parameters: `after_seq`, `after_id` (the cursor; both "" before every record), `horizon` (ISO text), `low`,
# `high` (the window, as the feed's: every change after the cursor up to the page's last lies in it), `limit`.
# The feed's changes (`seq`, `change_id`) after the cursor, oldest first, with their stamp and agent: the records
# of one change share both.
CHANGES = Statement(
    f"MATCH (h:{CHANGE_LABEL})\n"
    f"WHERE {_CHANGE_WINDOW}\n"
    f"  AND {past_index('h.seq')} >= $after_seq AND {past_index('h.seq')} <= $horizon\n"
    f"  AND ({past_index('h.seq')} > $after_seq OR {past_index('h.change_id')} > $after_id)\n"
    "WITH DISTINCT h.seq AS seq, h.change_id AS change_id, h.at AS at, h.agent AS agent\n"
    "ORDER BY seq, change_id\n"
    "LIMIT $limit\n"
    "RETURN seq, change_id, at, agent"
)

# Parameters: `pairs` ([{at, id}]: each change of the page, its stamp and its id). The first `seq` of each change
# among all its records (found by their `at`, which they share, and their change id: one index seek a change; a
# lookup by every stamp and a list of every id made the engine match each stamp against each id, 42 ms for a page
# of 500 changes against 4, holding the writes behind it).
FIRST_SEQS = Statement(
    "UNWIND $pairs AS p\n"
    f"MATCH (h:{CHANGE_LABEL}) WHERE h.at = p.at AND h.change_id = p.id\n"
    "RETURN h.change_id AS change_id, min(h.seq) AS first"
)

# Parameters: `after_at`, `after_id` (the cursor; both "" before every conflict), `horizon`, `low`, `high`,
# `limit`. Conflict records after the cursor, oldest first by (`at`, `conflict_id`), with the agent whose value
# was held (the incoming claim's).
CONFLICTS = Statement(
    f"MATCH (c:{CONFLICT_LABEL})\n"
    f"WHERE {_CONFLICT_WINDOW}\n"
    f"  AND {past_index('c.at')} <= $horizon\n"
    f"  AND ({past_index('c.at')} > $after_at OR ({past_index('c.at')} = $after_at"
    f" AND {past_index('c.conflict_id')} > $after_id))\n"
    "RETURN c.at AS at, c.conflict_id AS conflict_id, c.change_id AS change_id, c.incoming_claim[0] AS agent\n"
    "ORDER BY at, conflict_id\n"
    "LIMIT $limit"
)

# Parameters: `writes` ([{at, n, id}]: each write of the page that left conflicts, its stamp, that stamp as a
# `seq_n` (which a conflict carries indexed) and its change id). For each: whether it left change records too (then
# its change counts it, not its conflicts) and its first conflict (it is counted there).
HELD_WRITES = Statement(
    "UNWIND $writes AS x\n"
    f"OPTIONAL MATCH (h:{CHANGE_LABEL}) WHERE h.at = x.at AND h.change_id = x.id\n"
    "WITH x, count(h) > 0 AS recorded\n"
    f"MATCH (c:{CONFLICT_LABEL}) WHERE c.{SEQ_NUMBER} = x.n AND c.at = x.at AND c.change_id = x.id\n"
    "RETURN c.change_id AS change_id, recorded, min(c.conflict_id) AS first"
)

CURSORS = Statement(
    f"MATCH (m:{META_LABEL})\n"
    "RETURN m.tally_seq AS seq, m.tally_id AS change_id, m.held_at AS at, m.held_id AS conflict_id"
)

# Parameters: `read_from` and `moved_to` (each {seq, change_id, at, conflict_id}: the cursors read from and reached),
# `tallies` ([{agent, writes, held, last_at}]). Applied whole only if the stored cursors are still `from` (another
# fold may have taken the page meanwhile): answers `applied`.
APPLY = Statement(
    f"MERGE (m:{META_LABEL} {{k: '{META_KEY}'}})\n"
    "WITH m WHERE coalesce(m.tally_seq, '') = $read_from.seq AND coalesce(m.tally_id, '') = $read_from.change_id"
    " AND coalesce(m.held_at, '') = $read_from.at AND coalesce(m.held_id, '') = $read_from.conflict_id\n"
    "SET m.tally_seq = $moved_to.seq, m.tally_id = $moved_to.change_id, m.held_at = $moved_to.at,"
    " m.held_id = $moved_to.conflict_id\n"
    "FOREACH (t IN $tallies |\n"
    f"  MERGE (a:{TALLY_LABEL} {{agent: t.agent}})\n"
    "  ON CREATE SET a.writes = 0, a.held = 0\n"
    "  SET a.writes = a.writes + t.writes, a.held = a.held + t.held,\n"
    "      a.last_at = CASE WHEN a.last_at IS NULL OR t.last_at > a.last_at THEN t.last_at ELSE a.last_at END)\n"
    "RETURN count(m) AS applied"
)

# The tallies and the cursors they were folded to, read together (a fold landing between two reads would
# otherwise be counted twice by a read that adds what is newer).
TALLIES = Statement(
    f"OPTIONAL MATCH (m:{META_LABEL})\n"
    "WITH m\n"
    f"OPTIONAL MATCH (a:{TALLY_LABEL})\n"
    "RETURN m.tally_seq AS seq, m.tally_id AS change_id, m.held_at AS at, m.held_id AS conflict_id,\n"
    "       collect({agent: a.agent, writes: a.writes, held: a.held, last_at: a.last_at}) AS tallies"
)

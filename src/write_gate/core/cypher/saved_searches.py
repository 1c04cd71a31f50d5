"""Saved searches: `:SavedSearch` system nodes keyed by `name`, shared by every agent.

They carry no identity (`_key`) and no search text (`_search`), and their label is reserved (no registry may
hold it), so no read, search, statistics or export of entities ever meets one. Each field is its own property
(an absent one is not stored); `_rev` guards an update against a concurrent one, `_save_id` tells the save that
created a node from one that found it there.
"""

from write_gate.core.cypher.statement import Statement

SAVED_SEARCH_LABEL = "SavedSearch"
REVISION = "_rev"
SAVE_ID = "_save_id"
# The search's own fields, as memory-mcp names them: what save_search takes and update_saved_search changes.
FIELDS = ("query", "searchType", "tags", "minImportance", "maxImportance", "description", "labels", "limit")
_S = f"(s:{SAVED_SEARCH_LABEL} {{name: $name}})"

# Parameters: `name`, `fields` (the given ones: a map without nulls), `agent`, `at`, `save_id`. One row;
# `created` false when a search of that name was there already (left as it was).
SAVE = Statement(
    f"MERGE {_S}\n"
    f"ON CREATE SET s += $fields, s.created_by = $agent, s.created_at = $at, s.useCount = 0, s.{REVISION} = 1,"
    f" s.{SAVE_ID} = $save_id\n"
    f"RETURN s.{SAVE_ID} = $save_id AS created, properties(s) AS search"
)

# Parameters: `name`, `rev` (the revision read), `agent`, `at`, and one per field of FIELDS (null removes it).
# No row when the search is gone or another update came first.
UPDATE = Statement(
    f"MATCH {_S} WHERE s.{REVISION} = $rev\n"
    "SET " + ", ".join(f"s.{field} = ${field}" for field in FIELDS) + ",\n"
    f"    s.updated_by = $agent, s.updated_at = $at, s.{REVISION} = $rev + 1\n"
    "RETURN properties(s) AS search"
)

# Parameters: `name`, `at`. Counts a run in the same statement that reads the count.
COUNT_RUN = Statement(
    f"MATCH {_S}\nSET s.useCount = coalesce(s.useCount, 0) + 1, s.lastExecuted = $at\nRETURN properties(s) AS search"
)

# Parameters: `name`. One row if it was there.
DELETE = Statement(f"MATCH {_S}\nDELETE s\nRETURN 1 AS deleted")

# Read-only. Parameters: `name`.
READ_ONE = Statement(f"MATCH {_S}\nRETURN properties(s) AS search")

# Read-only: every saved search, by name.
READ_ALL = Statement(f"MATCH (s:{SAVED_SEARCH_LABEL})\nRETURN properties(s) AS search, s.name AS name ORDER BY name")

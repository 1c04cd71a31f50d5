"""Seed 004's archive: entities marked `_archived_at` / `_archived_by` (nothing deleted), which every read then
skips unless asked (`reads.not_archived`). An entity matches the archive's criteria when it meets any one given:
`last_updated` before `$older_than`, importance below `$importance_below`, one of the tags `$k_tags` (folded).
Each mark (and its removal) is one change record, as `history_writes` records the memory profile's changes."""

import functools

from write_gate.core.cypher.aliases import not_alias
from write_gate.core.cypher.history_writes import append_changes, bump_revision, property_change, with_seq
from write_gate.core.cypher.reads import not_archived
from write_gate.core.cypher.stat_counts import due
from write_gate.core.cypher.statement import Statement
from write_gate.core.identifiers import quote
from write_gate.core.identity import FOLD_PREFIX, KEY_FIELD
from write_gate.core.knowledge import ARCHIVED_AT, ARCHIVED_BY, IMPORTANCE, TAGS


def _matches(var: str) -> str:
    """Any criterion given (a null parameter is one not given)."""
    return (
        f"(($older_than IS NOT NULL AND {var}.last_updated < $older_than)"
        f" OR ($importance_below IS NOT NULL AND {var}.{IMPORTANCE} < $importance_below)"
        f" OR ($k_tags IS NOT NULL AND any(t IN coalesce({var}.{FOLD_PREFIX}{TAGS}, []) WHERE t IN $k_tags)))"
    )


@functools.lru_cache(maxsize=64)
def candidates(labels: tuple[str, ...]) -> Statement:
    """Read-only: the entities of `labels` (not aliases, not archived) that match. Parameters: the criteria."""
    branches = [
        f"MATCH (n:{quote(label)})\n"
        f"WHERE {not_alias('n')} AND {not_archived('n')} AND {_matches('n')}\n"
        f"RETURN id(n) AS id, labels(n) AS labels, n.{KEY_FIELD} AS key, n.name AS name"
        for label in labels
    ]
    return Statement("\nUNION ALL\n".join(branches))


# Marks the nodes of `ids` that still match and are not archived; answers their ids. Parameters: `ids`, the
# criteria, and the change stamp (`change_id`, `at`, `agent`).
ARCHIVE = Statement(
    "UNWIND $ids AS i\n"
    f"MATCH (n) WHERE id(n) = i AND {not_alias('n')} AND {not_archived('n')} AND {_matches('n')}\n"
    f"{with_seq('n', 'n')}\n"
    f"{append_changes(property_change('n', ARCHIVED_AT, '$at'))}\n"
    f"SET n.{ARCHIVED_AT} = $at, n.{ARCHIVED_BY} = $agent, {bump_revision('n')}, {due('n')}\n"
    "RETURN id(n) AS id"
)

# Takes the nodes of `ids` back out of the archive; answers the ids that were in it. Parameters: `ids` and the
# change stamp.
RESTORE = Statement(
    "UNWIND $ids AS i\n"
    f"MATCH (n) WHERE id(n) = i AND n.{ARCHIVED_AT} IS NOT NULL\n"
    f"{with_seq('n', 'n')}\n"
    f"{append_changes(property_change('n', ARCHIVED_AT, 'null'))}\n"
    f"SET n.{ARCHIVED_AT} = null, n.{ARCHIVED_BY} = null, {bump_revision('n')}, {due('n')}\n"
    "RETURN id(n) AS id"
)

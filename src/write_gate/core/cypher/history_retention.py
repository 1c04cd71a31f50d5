"""Pruning the change history (issue 12, item 4): the statements that delete records older than a cutoff.

Records are plain nodes (core/history.py) whose `at` is the gate's ISO-8601 UTC text, which orders as time
when compared as text, so `at < $cutoff` picks the old ones, exactly (core/cypher/ranges.py: FalkorDB's range
index loosens an upper bound on a string; seen on the 4.16 module shipped here, where `at < $cutoff` alone
matched every record and pruning deleted the whole history). Each statement deletes at most one
chunk, so one run never holds a huge transaction: the caller repeats it until a chunk comes back short. Open
conflicts are never deleted, however old: they wait for `resolve_conflict`.
"""

from write_gate.core.cypher.ranges import exactly
from write_gate.core.cypher.statement import Statement
from write_gate.core.history import CHANGE_LABEL, CONFLICT_LABEL, ConflictStatus

# Records deleted by one statement at most.
PRUNE_CHUNK = 10_000
# The conflicts a prune may delete: the decided ones.
PRUNABLE_CONFLICT_STATUSES = (ConflictStatus.SETTLED.value, ConflictStatus.RESOLVED.value)


def prune_chunk(chunk: int) -> int:
    """A LIMIT pasted into a prune statement: only a positive int (not a bool) gets there."""
    if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
        raise ValueError("a prune chunk is a positive integer")
    return chunk


def prune_changes(cutoff: str, chunk: int = PRUNE_CHUNK) -> Statement:
    """Delete up to `chunk` change records written before `cutoff`; answers `deleted`."""
    return Statement(
        f"MATCH (r:{CHANGE_LABEL}) WHERE {exactly('r.at', '<', '$cutoff')}\n"
        f"WITH r LIMIT {prune_chunk(chunk)}\n"
        "DETACH DELETE r\n"
        "RETURN count(*) AS deleted",
        {"cutoff": cutoff},
    )


def prune_conflicts(cutoff: str, chunk: int = PRUNE_CHUNK) -> Statement:
    """Delete up to `chunk` settled or resolved conflict records written before `cutoff`; answers `deleted`."""
    return Statement(
        f"MATCH (c:{CONFLICT_LABEL}) WHERE c.status IN $statuses AND c.at < $cutoff\n"
        f"WITH c LIMIT {prune_chunk(chunk)}\n"
        "DETACH DELETE c\n"
        "RETURN count(*) AS deleted",
        {"cutoff": cutoff, "statuses": list(PRUNABLE_CONFLICT_STATUSES)},
    )

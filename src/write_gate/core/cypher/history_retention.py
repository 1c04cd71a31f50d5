"""Pruning the change history (issue 12, item 4): the statements that delete records older than a cutoff.

Records are plain nodes (core/history.py) whose `at` is the gate's ISO-8601 UTC text, which orders as time when
compared as text. A chunk is found through the numeric `seq_n` index (core/feed_windows.py; migration 0013), whose
range FalkorDB answers exactly and stops reading at the chunk's LIMIT: a range of the string `at` index read (and
cost) every record before the cutoff first, and answered newer ones too (core/cypher/ranges.py: on the 4.16 module
shipped here `at < $cutoff` alone once matched every record and pruning deleted the whole history). The text test
`at < $cutoff` is made past the index and decides; the number only bounds what is read (`number_below`).

A change record's `seq_n` is its `seq`'s moment, at or after its `at`: a record stamped before the cutoff but
ordered after a later-stamped change of its subject (a gate whose clock ran behind another's) is pruned once its
`seq`'s moment is before the cutoff, one later prune on. A conflict's `seq_n` is its `at`'s own moment.

Each statement deletes at most one chunk, so one run never holds a huge transaction: the caller repeats it until a
chunk comes back short. Open conflicts are never deleted, however old: they wait for `resolve_conflict` (a chunk of
conflicts reads the open ones older than the cutoff too, as many as stay open).
"""

from write_gate.core.cypher.ranges import past_index
from write_gate.core.cypher.statement import Statement
from write_gate.core.feed_windows import SEQ_NUMBER, number_below
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


def before_cutoff(var: str) -> str:
    """Records `var` stamped before `$cutoff`, found in the numeric window below `$cutoff_n` (`cutoff_params`)."""
    return f"{var}.{SEQ_NUMBER} < $cutoff_n AND {past_index(f'{var}.at')} < $cutoff"


def cutoff_params(cutoff: str) -> dict[str, str | int]:
    return {"cutoff": cutoff, "cutoff_n": number_below(cutoff)}


def prune_changes(cutoff: str, chunk: int = PRUNE_CHUNK) -> Statement:
    """Delete up to `chunk` change records written before `cutoff`; answers `deleted`."""
    return Statement(
        f"MATCH (r:{CHANGE_LABEL}) WHERE {before_cutoff('r')}\n"
        f"WITH r LIMIT {prune_chunk(chunk)}\n"
        "DETACH DELETE r\n"
        "RETURN count(*) AS deleted",
        cutoff_params(cutoff),
    )


def prune_conflicts(cutoff: str, chunk: int = PRUNE_CHUNK) -> Statement:
    """Delete up to `chunk` settled or resolved conflict records written before `cutoff`; answers `deleted`."""
    return Statement(
        f"MATCH (c:{CONFLICT_LABEL}) WHERE {before_cutoff('c')} AND c.status IN $statuses\n"
        f"WITH c LIMIT {prune_chunk(chunk)}\n"
        "DETACH DELETE c\n"
        "RETURN count(*) AS deleted",
        {**cutoff_params(cutoff), "statuses": list(PRUNABLE_CONFLICT_STATUSES)},
    )

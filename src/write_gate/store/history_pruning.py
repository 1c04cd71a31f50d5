"""Deletes change and conflict records older than a cutoff, chunk by chunk (core/cypher/history_retention.py)."""

from dataclasses import dataclass

from write_gate.core.cypher.history_retention import PRUNE_CHUNK, prune_changes, prune_conflicts
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend


@dataclass(frozen=True)
class Pruned:
    changes: int
    conflicts: int

    @property
    def total(self) -> int:
        return self.changes + self.conflicts


async def _until_short(backend: GraphBackend, statement: Statement, chunk: int) -> int:
    """Repeat a chunked delete until a chunk comes back short; how many went in all."""
    total = 0
    while True:
        rows = await backend.write(statement)
        deleted = rows[0]["deleted"] if rows else 0
        total += deleted
        if deleted < chunk:
            return total


async def prune_history(backend: GraphBackend, cutoff: str, chunk: int = PRUNE_CHUNK) -> Pruned:
    """Change records, and settled or resolved conflicts, written before `cutoff`; open conflicts stay."""
    changes = await _until_short(backend, prune_changes(cutoff, chunk), chunk)
    conflicts = await _until_short(backend, prune_conflicts(cutoff, chunk), chunk)
    return Pruned(changes, conflicts)

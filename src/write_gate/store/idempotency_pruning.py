"""Deletes safe retries' records claimed before a cutoff, chunk by chunk (core/cypher/idempotency.py)."""

from write_gate.core.cypher.history_retention import PRUNE_CHUNK
from write_gate.core.cypher.idempotency import prune_records
from write_gate.engines import GraphBackend


async def prune_idempotency(backend: GraphBackend, cutoff: str, chunk: int = PRUNE_CHUNK) -> int:
    """How many records went."""
    total = 0
    while True:
        rows = await backend.write(prune_records(cutoff, chunk))
        deleted = rows[0]["deleted"] if rows else 0
        total += deleted
        if deleted < chunk:
            return total

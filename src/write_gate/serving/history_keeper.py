"""Keeps a served gate's change history within WRITE_GATE_HISTORY_RETENTION_DAYS: a prune at start, then
one an hour. A failed prune (the engine away, say) is logged and tried again at the next round; it never
stops the server."""

import logging

import anyio

from write_gate.core.clock import utc_now
from write_gate.core.decay import parse_at
from write_gate.core.retention import retention_cutoff
from write_gate.engines import BackendError, BackendUnavailable, GraphBackend
from write_gate.store.history_pruning import Pruned, prune_history

logger = logging.getLogger(__name__)

PRUNE_INTERVAL_SECONDS = 3600.0


async def prune_once(backend: GraphBackend, retention_days: float | None) -> Pruned | None:
    """One prune; None when the history keeps every record, or when the prune failed (logged)."""
    cutoff = retention_cutoff(parse_at(utc_now()), retention_days)
    if cutoff is None:
        return None
    try:
        pruned = await prune_history(backend, cutoff)
    except Exception as exc:  # a background task: log it, keep serving, try again at the next round
        engine = isinstance(exc, BackendUnavailable | BackendError)  # the engine away or refusing: no traceback
        logger.warning("history not pruned: %s", exc, exc_info=not engine)
        return None
    if pruned.total:
        logger.info(
            "pruned %d change records and %d decided conflicts written before %s",
            pruned.changes,
            pruned.conflicts,
            cutoff,
        )
    return pruned


async def keep_history_pruned(
    backend: GraphBackend, retention_days: float | None, interval: float = PRUNE_INTERVAL_SECONDS
) -> None:
    """Until cancelled; returns at once when the history keeps every record."""
    if not retention_days:
        return
    while True:
        await prune_once(backend, retention_days)
        await anyio.sleep(interval)

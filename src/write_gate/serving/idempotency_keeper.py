"""Keeps safe retries' records within WRITE_GATE_IDEMPOTENCY_RETENTION_HOURS: a prune at start, then one every
tenth of the window (at most hourly). A failed prune is logged and tried again at the next round; an expired
record a prune has not reached yet is forgotten by the next call with its key anyway (services/idempotency.py)."""

import logging
from datetime import UTC, datetime, timedelta

import anyio

from write_gate.core.clock import as_utc_text
from write_gate.engines import BackendError, BackendUnavailable, GraphBackend
from write_gate.store.idempotency_pruning import prune_idempotency

logger = logging.getLogger(__name__)


async def prune_once(backend: GraphBackend, retention_hours: float) -> int | None:
    """One prune: how many records went, or None when it failed (logged)."""
    cutoff = as_utc_text(datetime.now(UTC) - timedelta(hours=retention_hours))
    try:
        pruned = await prune_idempotency(backend, cutoff)
    except Exception as exc:  # a background task: log it, keep serving, try again at the next round
        engine = isinstance(exc, BackendUnavailable | BackendError)
        logger.warning("idempotency records not pruned: %s", exc, exc_info=not engine)
        return None
    if pruned:
        logger.info("pruned %d idempotency records claimed before %s", pruned, cutoff)
    return pruned


async def keep_idempotency_pruned(backend: GraphBackend, retention_hours: float) -> None:
    """Until cancelled."""
    interval = min(3600.0, retention_hours * 360.0)  # a tenth of the window, in seconds
    while True:
        await prune_once(backend, retention_hours)
        await anyio.sleep(interval)

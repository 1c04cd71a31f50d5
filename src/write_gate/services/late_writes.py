"""Writes that settle a call's idempotency key after the engine went away, kept trying until the engine is back.

A keyed call ends by storing its outcome, freeing its key, or marking it in doubt (services/idempotency.py). When
the engine has just gone away, that last write fails too, and the key would stay claimed by a call that is over:
every retry of it would wait until the claim went stale (WRITE_GATE_IDEMPOTENCY_STALE_SECONDS), however soon the
engine came back. So such a write is tried again in the background, once a second, until it lands or the claim
is stale anyway. Each concerns one call's own claim (its statements match on the claim's id), so a late landing
changes nothing another call holds. A gate that stops first leaves the claim to go stale, as before.
"""

import asyncio
import logging
import time

from write_gate.core.cypher.statement import Statement
from write_gate.engines import BackendError, BackendUnavailable, GraphBackend

logger = logging.getLogger(__name__)

RETRY_SECONDS = 1.0


class LateWrites:
    """One per server: the writes still being tried, held so that they run to their end."""

    def __init__(self, retry_seconds: float = RETRY_SECONDS) -> None:
        self.retry_seconds = retry_seconds
        self._running: set[asyncio.Task[None]] = set()

    @property
    def pending(self) -> int:
        return len(self._running)

    def keep_trying(self, backend: GraphBackend, statement: Statement, what: str, for_seconds: float) -> None:
        task = asyncio.get_running_loop().create_task(self._until_landed(backend, statement, what, for_seconds))
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def _until_landed(self, backend: GraphBackend, statement: Statement, what: str, for_seconds: float) -> None:
        deadline = time.monotonic() + for_seconds
        while time.monotonic() < deadline:
            await asyncio.sleep(self.retry_seconds)
            try:
                await backend.write(statement)
            except (BackendUnavailable, BackendError):
                continue
            logger.info("an idempotency record was %s once the engine was back", what)
            return
        logger.warning("an idempotency record was never %s: the engine stayed away; its claim goes stale", what)

"""Keeps a served gate's registry loaded and current, whatever the engine does.

The server always starts. While the engine is down (or the registry cannot be read) the first load,
with the pending migrations before it, is retried with backoff, and every tool answers why it cannot
work. Once loaded, the registry's version on the graph is polled, so a `schema load` or a migration
made through any gate or the CLI reaches every gate on the graph within one poll interval and one load.
"""

import logging
from collections.abc import Awaitable, Callable

import anyio

from write_gate.core.model import ErrorCode, GateRejection
from write_gate.engines import BackendError, BackendUnavailable
from write_gate.services.gate import Gate

logger = logging.getLogger(__name__)

FIRST_RETRY_SECONDS = 0.5
# Retries back off up to this many poll intervals (10 s by default), never below a second.
RETRY_CAP_POLLS = 5


class RegistryKeeper:
    def __init__(
        self,
        gate: Gate,
        migrate: Callable[[], Awaitable[list[str]]] | None,
        poll_seconds: float,
        on_change: Callable[[Gate], Awaitable[None]] | None = None,
    ) -> None:
        self.gate = gate
        self._migrate = migrate
        self._poll_seconds = poll_seconds
        self._on_change = on_change

    async def attempt(self) -> bool:
        """Pending migrations, then the registry. False (and the reason kept on the gate) when either fails."""
        try:
            if self._migrate is not None:
                applied = await self._migrate()
                self._migrate = None
                if applied:
                    logger.info("applied migrations: %s", ", ".join(applied))
            await self.gate.refresh()
            return True
        except GateRejection as exc:
            self.gate.load_error = exc
        except (BackendUnavailable, BackendError) as exc:
            reason = "engine unreachable" if isinstance(exc, BackendUnavailable) else "a migration failed"
            logger.warning("migrations not applied: %s", exc)
            self.gate.load_error = GateRejection(
                ErrorCode.SCHEMA_SOURCE_UNAVAILABLE, f"the schema registry is not loaded ({reason})", reason=reason
            )
        logger.warning("registry not loaded: %s", self.gate.load_error.rejected.message)
        return False

    async def run(self) -> None:
        """Until cancelled: retry the first load with backoff, then poll the version."""
        delay, cap = FIRST_RETRY_SECONDS, max(1.0, RETRY_CAP_POLLS * self._poll_seconds)
        while self.gate.snapshot is None:
            await anyio.sleep(delay)
            delay = min(delay * 2, cap)
            if await self.attempt():
                logger.info("registry loaded after the engine came back")
                await self._changed()
        if self._poll_seconds <= 0:
            return
        while True:
            await anyio.sleep(self._poll_seconds)
            try:
                changed = await self.gate.refresh_if_changed()
            except GateRejection:
                continue  # the engine is away: the snapshot in force stays, the next poll tries again
            except Exception:  # a background task never stops the server: logged, tried at the next poll
                # (CI: an engine killed mid-write left asyncio's transport half closed, and its TypeError ended a
                # stdio gate, every client's connection with it)
                logger.warning("registry version not read; the snapshot in force stays", exc_info=True)
                continue
            if changed:
                logger.info("registry changed on the graph (version %s): reloaded", self.gate.snapshot.version)
                await self._changed()

    async def _changed(self) -> None:
        if self._on_change is not None:
            await self._on_change(self.gate)

"""Start-up and shutdown of what a served gate needs: engine, migrations, registry, formula."""

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from write_gate import __version__
from write_gate.backends import GraphBackend, open_backend
from write_gate.config import Settings
from write_gate.decisions import Policy
from write_gate.formula import load_provider
from write_gate.gate import Gate
from write_gate.graph_registry import GraphRegistrySource
from write_gate.migrations import migrate
from write_gate.model import GateRejection
from write_gate.values import Limits

logger = logging.getLogger(__name__)


def build_gate(settings: Settings, backend: GraphBackend) -> Gate:
    limits = Limits(settings.max_properties, settings.max_string_length, settings.max_list_length)
    policy = Policy(settings.unknown_label_policy, settings.fallback_label, limits)
    return Gate(backend, GraphRegistrySource(backend), load_provider(settings.formula_provider), policy, __version__)


@asynccontextmanager
async def open_gate(settings: Settings, *, auto_migrate: bool = True) -> AsyncIterator[Gate]:
    """Open the engine, apply pending migrations, load the registry; close the engine on exit."""
    provider_check = load_provider(settings.formula_provider)  # a bad provider spec fails start-up, loudly
    del provider_check
    backend = await open_backend(settings)
    try:
        gate = build_gate(settings, backend)
        try:
            if auto_migrate:
                applied = await migrate(backend)
                if applied:
                    logger.info("applied migrations: %s", ", ".join(applied))
            await gate.refresh()
        except GateRejection as exc:
            # The engine may come up later; the gate serves and answers with structured rejections meanwhile.
            logger.warning("registry not loaded at start-up: %s", exc.rejected.message)
        except Exception as exc:  # noqa: BLE001 - an unreachable engine must not stop the server starting
            logger.warning("start-up migration failed: %s", exc)
        yield gate
    finally:
        await backend.close()

"""Start-up and shutdown of what a served gate needs: engine, migrations, registry, formula."""

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio

from write_gate import __version__
from write_gate.backends import GraphBackend, open_backend
from write_gate.config import Settings
from write_gate.decisions import Policy
from write_gate.formula import load_provider
from write_gate.gate import Gate
from write_gate.graph_registry import GraphRegistrySource
from write_gate.migrations import migrate
from write_gate.registry_keeper import RegistryKeeper
from write_gate.values import Limits

logger = logging.getLogger(__name__)


def build_gate(settings: Settings, backend: GraphBackend) -> Gate:
    limits = Limits(settings.max_properties, settings.max_string_length, settings.max_list_length)
    policy = Policy(settings.unknown_label_policy, settings.fallback_label, limits)
    return Gate(backend, GraphRegistrySource(backend), load_provider(settings.formula_provider), policy, __version__)


@asynccontextmanager
async def open_gate(
    settings: Settings,
    *,
    auto_migrate: bool = True,
    keep_loading: bool = False,
    on_registry_change: Callable[[], Awaitable[None]] | None = None,
) -> AsyncIterator[Gate]:
    """Open the engine, apply pending migrations, load the registry; close the engine on exit.

    `keep_loading` (a server): start even if the engine or registry is not there yet, keep retrying, and
    poll the registry's version while running. Otherwise (the CLI) a failed first load is an error."""
    load_provider(settings.formula_provider)  # a bad provider spec fails start-up, loudly
    backend = await open_backend(settings)
    try:
        gate = build_gate(settings, backend)
        keeper = RegistryKeeper(
            gate,
            (lambda: migrate(backend)) if auto_migrate else None,
            settings.registry_poll_seconds,
            on_registry_change,
        )
        loaded = await keeper.attempt()
        if not keep_loading:
            if not loaded:
                raise gate.load_error  # type: ignore[misc]  # attempt() always sets it when it fails
            yield gate
            return
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(keeper.run)
            try:
                yield gate
            finally:
                tasks.cancel_scope.cancel()
    finally:
        await backend.close()

"""Start-up and shutdown of what a served gate needs: engine, migrations, registry, formula."""

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio

from write_gate import __version__
from write_gate.core.change_feed import write_retry_seconds
from write_gate.core.decisions import Policy
from write_gate.core.formula import FormulaProvider, load_provider
from write_gate.core.values import Limits
from write_gate.engines import GraphBackend
from write_gate.services.embeddings import Embeddings
from write_gate.services.gate import Gate
from write_gate.services.writes_in_flight import WritesInFlight
from write_gate.serving.config import BackendKind, ConfigurationError, Settings
from write_gate.serving.embedders import load_embedder
from write_gate.serving.history_keeper import keep_history_pruned
from write_gate.serving.idempotency_keeper import keep_idempotency_pruned
from write_gate.serving.instrumented_backend import InstrumentedBackend
from write_gate.serving.paced_backend import PacedBackend
from write_gate.serving.registry_keeper import RegistryKeeper
from write_gate.serving.stats_keeper import keep_stats_folded
from write_gate.serving.telemetry import EngineTarget, Telemetry
from write_gate.store.graph_registry import GraphRegistrySource
from write_gate.store.migrations import migrate

logger = logging.getLogger(__name__)


async def open_backend(settings: Settings) -> GraphBackend:
    if settings.backend is BackendKind.MEMGRAPH:
        from write_gate.engines.memgraph import MemgraphBackend

        return MemgraphBackend(
            settings.memgraph_url,
            settings.memgraph_user,
            settings.memgraph_password.get_secret_value(),
            settings.memgraph_database,
            settings.query_timeout_seconds,
            write_retry_seconds(settings.change_settle_seconds, settings.query_timeout_seconds),
            read_timeout_seconds=settings.read_timeout_seconds,
        )
    if settings.backend is BackendKind.FALKORDB:
        from write_gate.engines.falkordb import FalkorDBBackend

        return FalkorDBBackend(
            settings.falkordb_url,
            settings.graph_name,
            settings.query_timeout_seconds,
            read_timeout_seconds=settings.read_timeout_seconds,
        )
    from write_gate.engines.embedded import EmbeddedBackend

    return await EmbeddedBackend.start(
        settings.data_dir,
        settings.embedded_fsync.value,
        settings.graph_name,
        settings.query_timeout_seconds,
        settings.embedded_start_timeout_seconds,
        read_timeout_seconds=settings.read_timeout_seconds,
    )


def engine_target(settings: Settings) -> EngineTarget:
    """What a statement's span names: the engine's kind and the graph (FalkorDB) or database (Memgraph)."""
    if settings.backend is BackendKind.MEMGRAPH:
        return EngineTarget("memgraph", settings.memgraph_database or "memgraph")
    return EngineTarget("falkordb", settings.graph_name)


MEMORY_METHOD_SETTING = "WRITE_GATE_MEMORY_EXTRACTION_METHOD"


def formula_provider(
    settings: Settings, *, stamps: str | None = None, stamps_setting: str = MEMORY_METHOD_SETTING
) -> FormulaProvider:
    """The configured provider, or ConfigurationError: a spec that loads no provider, or a method the server
    stamps on writes itself (`stamps`: the memory profile's, an import's) that the provider does not accept, so
    that mistake stops the start rather than rejecting every write."""
    try:
        provider = load_provider(settings.formula_provider)
    except (ValueError, TypeError, ImportError, AttributeError) as exc:
        named = "WRITE_GATE_FORMULA_PROVIDER" in str(exc)  # load_provider's own message names the setting
        message = str(exc) if named else f"WRITE_GATE_FORMULA_PROVIDER={settings.formula_provider}: {exc!r}"
        raise ConfigurationError(message) from exc
    allowed = sorted(provider.allowed_extraction_methods())
    if stamps is not None and stamps not in allowed:
        shown = ", ".join(allowed[:6]) + (f", ... ({len(allowed)} in all)" if len(allowed) > 6 else "")
        raise ConfigurationError(
            f"{stamps_setting}={stamps} is not a method the {settings.formula_provider!r} formula provider "
            f"accepts; set it to one that is: {shown} (see docs/provenance/formulas.md)"
        )
    return provider


def build_gate(settings: Settings, backend: GraphBackend, registry: GraphBackend | None = None) -> Gate:
    limits = Limits(settings.max_properties, settings.max_string_length, settings.max_list_length)
    policy = Policy(
        settings.unknown_label_policy,
        settings.fallback_label,
        limits,
        settings.undeclared_property_policy,
        conflicts=settings.conflict_policy,
        half_life_by_method=dict(settings.decay_half_life_days),
        history_retention_days=settings.history_retention_days or None,  # 0: keep every record
        hierarchy_type=settings.hierarchy_type,
    )
    source = GraphRegistrySource(registry or backend)
    embedder = load_embedder(settings)
    embeddings = Embeddings(embedder, backend) if embedder is not None else None
    # A write whose outcome is unknown is held as long as a write through another gate: the settle window.
    in_flight = WritesInFlight(linger_seconds=settings.change_settle_seconds)
    return Gate(backend, source, formula_provider(settings), policy, __version__, embeddings, in_flight)


@asynccontextmanager
async def open_gate(
    settings: Settings,
    *,
    auto_migrate: bool = True,
    keep_loading: bool = False,
    on_registry_change: Callable[[Gate], Awaitable[None]] | None = None,
    registry: GraphBackend | None = None,
    telemetry: Telemetry | None = None,
) -> AsyncIterator[Gate]:
    """Open the engine, apply pending migrations, load the registry; close the engine on exit.

    `keep_loading` (a server): start even if the engine or registry is not there yet, keep retrying, and
    poll the registry's version while running. Otherwise (the CLI) a failed first load is an error.
    `registry`: another graph's backend (kept open by the caller) whose registry this gate uses (shared spaces).
    `telemetry`: with metrics or tracing on, every statement of this gate is counted, timed and traced."""
    formula_provider(settings)  # a bad provider spec fails start-up, loudly
    load_embedder(settings)  # so does an embeddings provider missing what it needs
    backend = await open_backend(settings)
    if telemetry is not None and telemetry.on:
        backend = InstrumentedBackend(backend, telemetry, engine_target(settings))
    try:
        gate = build_gate(settings, backend, registry)
        keeper = RegistryKeeper(
            gate,
            (lambda: migrate(backend)) if auto_migrate else None,
            settings.registry_poll_seconds,
            on_registry_change,
        )
        loaded = await keeper.attempt()
        if not keep_loading:
            if not loaded:
                assert gate.load_error is not None  # attempt() always sets it when it fails
                raise gate.load_error
            yield gate
            return
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(keeper.run)
            tasks.start_soon(keep_history_pruned, backend, gate.policy.history_retention_days)
            tasks.start_soon(keep_idempotency_pruned, backend, settings.idempotency_retention_hours)
            if settings.stats_fold_seconds:
                fold_args = (
                    lambda: gate.snapshot,
                    settings.stats_fold_seconds,
                    settings.change_settle_seconds,
                    gate.in_flight,
                )
                tasks.start_soon(keep_stats_folded, PacedBackend(backend, settings.stats_share), *fold_args)
            try:
                yield gate
            finally:
                tasks.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):  # serving cancelled (a signal): the engine is still left cleanly
            await backend.close()

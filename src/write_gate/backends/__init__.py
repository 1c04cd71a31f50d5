"""Engines behind one protocol; `open_backend` picks one from the settings."""

from write_gate.backends.base import (
    BackendError,
    BackendUnavailable,
    ConstraintViolation,
    GraphBackend,
    Row,
    StorageUnavailable,
)
from write_gate.config import BackendKind, Settings


async def open_backend(settings: Settings) -> GraphBackend:
    if settings.backend is BackendKind.MEMGRAPH:
        from write_gate.backends.memgraph import MemgraphBackend

        return MemgraphBackend(
            settings.memgraph_url,
            settings.memgraph_user,
            settings.memgraph_password.get_secret_value(),
            settings.memgraph_database,
            settings.query_timeout_seconds,
        )
    if settings.backend is BackendKind.FALKORDB:
        from write_gate.backends.falkordb import FalkorDBBackend

        return FalkorDBBackend(settings.falkordb_url, settings.graph_name, settings.query_timeout_seconds)
    from write_gate.backends.embedded import EmbeddedBackend

    return await EmbeddedBackend.start(
        settings.embedded_db_file, settings.embedded_fsync.value, settings.graph_name, settings.query_timeout_seconds
    )


__all__ = [
    "BackendError",
    "BackendUnavailable",
    "ConstraintViolation",
    "GraphBackend",
    "Row",
    "StorageUnavailable",
    "open_backend",
]

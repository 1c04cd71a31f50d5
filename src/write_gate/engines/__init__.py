"""Engines behind one small protocol (`base`); `serving.assembly.open_backend` picks one from the settings."""

from write_gate.engines.base import (
    BackendError,
    BackendUnavailable,
    ConstraintViolation,
    GraphBackend,
    QueryTimeout,
    Row,
    StorageUnavailable,
    WriteInDoubt,
    counted_reads,
    traced_writes,
)

__all__ = [
    "BackendError",
    "BackendUnavailable",
    "ConstraintViolation",
    "GraphBackend",
    "QueryTimeout",
    "Row",
    "StorageUnavailable",
    "WriteInDoubt",
    "counted_reads",
    "traced_writes",
]

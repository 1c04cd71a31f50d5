"""The one small protocol every engine implements: run a parameterised statement, read or write."""

from collections import OrderedDict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

from write_gate.core.cypher.dialect import Dialect
from write_gate.core.cypher.statement import Statement

Row = dict[str, Any]


class BackendUnavailable(Exception):
    """The engine cannot be reached (refused, reset, timed out). The caller answers BACKEND_UNAVAILABLE."""


class WriteInDoubt(BackendUnavailable):
    """A write statement reached the engine, which then went away or did not answer in time: it may have been
    applied. No backend sends it again (a second send could apply it twice); the agent is told it may have."""


class StorageUnavailable(BackendUnavailable):
    """The engine is up but cannot store writes (disk full, out of memory); reads still work."""


class BackendError(Exception):
    """The engine refused the statement itself."""


class ConstraintViolation(BackendError):
    """A unique constraint refused a write."""


class QueryTimeout(BackendError):
    """The engine stopped a read at its time limit (WRITE_GATE_READ_TIMEOUT_SECONDS): it ran and was ended, which
    changes nothing, and the engine serves on. The caller answers QUERY_TIMEOUT."""

    def __init__(self, limit_seconds: float) -> None:
        super().__init__(f"the engine stopped the read at its time limit of {limit_seconds:g} s")
        self.limit_seconds = limit_seconds


@dataclass
class WriteTrace:
    """What one tool call's writes did to the engine: `reached` once a write statement was applied, or may have
    been (it reached the engine and no answer came). A call that failed with nothing reached wrote nothing."""

    reached: bool = False


_TRACE: ContextVar[WriteTrace | None] = ContextVar("write_gate_write_trace", default=None)


@contextmanager
def traced_writes() -> Iterator[WriteTrace]:
    """Trace the writes this task (and the tasks it starts) sends until the block ends; an enclosing trace sees
    them too."""
    outer = _TRACE.get()
    trace = WriteTrace()
    token = _TRACE.set(trace)
    try:
        yield trace
    finally:
        _TRACE.reset(token)
        if outer is not None and trace.reached:
            outer.reached = True


def write_reached() -> None:
    """Backends call this when a write statement was applied, or may have been."""
    if (trace := _TRACE.get()) is not None:
        trace.reached = True


@dataclass
class ReadCost:
    """What the engine answered one tool call's reads: one per statement plus one per row (core.fair_share)."""

    cost: int = 0


_READS: ContextVar[ReadCost | None] = ContextVar("write_gate_read_cost", default=None)


@contextmanager
def counted_reads() -> Iterator[ReadCost]:
    """Count what this task's (and the tasks it starts) read statements are answered until the block ends."""
    tally = ReadCost()
    token = _READS.set(tally)
    try:
        yield tally
    finally:
        _READS.reset(token)


def read_answered(rows: int) -> None:
    """Backends call this with each read statement's row count."""
    if (tally := _READS.get()) is not None:
        tally.cost += 1 + rows


class GraphBackend(Protocol):
    # Read-only here, so a backend may hold its own engine's dialect (MemgraphDialect, FalkorDBDialect).
    @property
    def dialect(self) -> Dialect: ...

    async def write(self, statement: Statement) -> list[Row]:
        """Run one statement in one transaction; return its rows as dicts."""
        ...

    async def read(self, statement: Statement) -> list[Row]:
        """Run one statement read-only at the engine (READ access mode / GRAPH.RO_QUERY)."""
        ...

    async def ensure_index(self, label: str, prop: str, *, relationship: bool = False) -> None:
        """An index on `prop` of the label's nodes (or, `relationship`, of the type's relationships)."""
        ...

    async def ensure_unique(self, label: str, prop: str) -> None: ...

    async def ensure_text_index(self, label: str) -> bool:
        """The label's full-text indexes on its search text and its trigrams (`core.grams`); False (said in the
        log) where the engine has none."""
        ...

    async def ping(self) -> None: ...

    async def close(self) -> None: ...


# What most values are: returned as they are, before any slower test (this runs on every value of every row).
_SCALARS = frozenset({str, int, float, bool, type(None)})


def plain(value: Any) -> Any:
    """Engine values to JSON-ready Python: nodes and relationships become maps of their properties."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is list:
        return [plain(v) for v in value]
    if kind is dict or kind is OrderedDict:  # falkordb answers a map as an OrderedDict
        return {key: plain(v) for key, v in value.items()}
    props = getattr(value, "properties", None)
    if isinstance(props, Mapping):  # falkordb Node/Edge
        return {key: plain(v) for key, v in props.items()}
    if isinstance(value, Mapping):
        return {key: plain(v) for key, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if hasattr(value, "items") and hasattr(value, "element_id"):  # neo4j Node/Relationship
        return {key: plain(v) for key, v in value.items()}
    return value

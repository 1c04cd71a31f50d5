"""FalkorDB, external (`FALKORDB_URL`) or the embedded server's socket, through falkordb's async client."""

import anyio
import redis.exceptions
from falkordb.asyncio import FalkorDB

from write_gate.backends.base import (
    BackendError,
    BackendUnavailable,
    ConstraintViolation,
    Row,
    StorageUnavailable,
    plain,
)
from write_gate.cypher import Statement
from write_gate.dialect import FalkorDBDialect

_UNAVAILABLE = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, ConnectionError, OSError, TimeoutError)
# FalkorDB answers duplicate DDL with an error; for an idempotent migration it means "already done".
_ALREADY_DONE = ("already indexed", "already exists")
# Redis refuses writes it cannot persist (MISCONF: the append-only file cannot be written, e.g. a full
# disk) or hold (OOM): the engine is up, the storage is not.
_STORAGE = ("MISCONF", "OOM ", "No space left")


class FalkorDBBackend:
    def __init__(self, url: str, graph: str, timeout_seconds: float) -> None:
        self.dialect = FalkorDBDialect()
        self._timeout = timeout_seconds
        self._graph_name = graph
        self._connect(url)

    def _connect(self, url: str) -> None:
        self._db = FalkorDB.from_url(
            url, socket_timeout=self._timeout, socket_connect_timeout=self._timeout, health_check_interval=0
        )
        self._graph = self._db.select_graph(self._graph_name)

    async def _run(self, statement: Statement, read_only: bool) -> list[Row]:
        try:
            with anyio.fail_after(self._timeout):
                query = self._graph.ro_query if read_only else self._graph.query
                result = await query(statement.text, dict(statement.params))
        except TimeoutError as exc:
            raise BackendUnavailable(f"FalkorDB did not answer within {self._timeout:g} s") from exc
        except _UNAVAILABLE as exc:
            raise BackendUnavailable(f"FalkorDB unreachable: {type(exc).__name__}") from exc
        except redis.exceptions.ResponseError as exc:
            if read_only and "empty key" in str(exc):
                return []  # FalkorDB creates a graph on its first write; until then a read finds nothing
            if isinstance(exc, redis.exceptions.OutOfMemoryError) or any(m in str(exc) for m in _STORAGE):
                raise StorageUnavailable(str(exc)) from exc
            if "unique constraint violation" in str(exc):
                raise ConstraintViolation(str(exc)) from exc
            raise BackendError(str(exc)) from exc
        names = [column[1] for column in result.header]
        return [dict(zip(names, (plain(v) for v in row), strict=True)) for row in result.result_set]

    async def write(self, statement: Statement) -> list[Row]:
        # FalkorDB serialises writes and runs each query atomically: one statement is one transaction.
        return await self._run(statement, read_only=False)

    async def read(self, statement: Statement) -> list[Row]:
        return await self._run(statement, read_only=True)

    async def _ddl(self, ddl: str) -> None:
        try:
            with anyio.fail_after(self._timeout):
                await self._graph.query(ddl)
        except _UNAVAILABLE as exc:
            raise BackendUnavailable(f"FalkorDB unreachable: {type(exc).__name__}") from exc
        except redis.exceptions.ResponseError as exc:
            if not any(marker in str(exc) for marker in _ALREADY_DONE):
                raise BackendError(str(exc)) from exc

    async def ensure_index(self, label: str, prop: str) -> None:
        await self._ddl(self.dialect.create_index(label, prop))

    async def ensure_unique(self, label: str, prop: str) -> None:
        # FalkorDBDialect says why there is no constraint here; the index is what remains.
        await self.ensure_index(label, prop)
        if (ddl := self.dialect.create_unique_constraint(label, prop)) is not None:
            await self._ddl(ddl)

    async def ping(self) -> None:
        try:
            with anyio.fail_after(self._timeout):
                await self._db.connection.ping()
        except _UNAVAILABLE as exc:
            raise BackendUnavailable(f"FalkorDB unreachable: {type(exc).__name__}") from exc

    async def close(self) -> None:
        connection = self._db.connection
        await connection.aclose()
        # The pool was handed to the client, so aclose() leaves it open: disconnect it ourselves.
        await connection.connection_pool.disconnect()

"""FalkorDB, external (`FALKORDB_URL`) or the embedded server's socket: statements over the gate's own connections
(`resp_pool`: no send is ever repeated, and each says whether it reached the engine), DDL, plans and replies holding
nodes through falkordb's async client (built by `falkordb_client`, which repeats nothing either)."""

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import redis.exceptions
from falkordb.asyncio import FalkorDB
from falkordb.asyncio.graph import AsyncGraph
from falkordb.asyncio.query_result import LABELS_ADDED, NODES_CREATED, QueryResult

from write_gate.core.cypher.dialect import SETTLE_NODE_LABELS, FalkorDBDialect
from write_gate.core.cypher.statement import Statement
from write_gate.engines.base import (
    BackendError,
    BackendUnavailable,
    ConstraintViolation,
    QueryTimeout,
    Row,
    StorageUnavailable,
    WriteInDoubt,
    plain,
    read_answered,
    write_reached,
)
from write_gate.engines.falkordb_client import Sending, open_client
from write_gate.engines.falkordb_params import params_header
from write_gate.engines.falkordb_reply import NeedsSchema, parse_rows, raise_errors
from write_gate.engines.resp_pool import RespPool

_UNAVAILABLE = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, ConnectionError, OSError, TimeoutError)
_NO_ANSWER = (redis.exceptions.TimeoutError, TimeoutError)  # reached, but no answer in time
logger = logging.getLogger(__name__)

# FalkorDB answers duplicate DDL with an error; for an idempotent migration it means "already done".
_ALREADY_DONE = ("already indexed", "already exists")
# Redis refuses writes it cannot persist (MISCONF: the append-only file cannot be written, e.g. a full
# disk) or hold (OOM): the engine is up, the storage is not.
_STORAGE = ("MISCONF", "OOM ", "No space left")
# FalkorDB's answer to a read stopped at its TIMEOUT.
_TIMED_OUT = "Query timed out"
# Node labels the writes may add before the next write first sends SETTLE_NODE_LABELS (core/cypher/dialect.py says
# why): the engine's own threshold, below which that read would merge nothing.
SETTLE_EVERY = 10_000


class FalkorDBBackend:
    def __init__(self, url: str, graph: str, timeout_seconds: float, read_timeout_seconds: float | None = None) -> None:
        """`read_timeout_seconds`: the limit the engine holds each read to (default: the timeout)."""
        self.dialect = FalkorDBDialect()
        self._timeout = timeout_seconds
        self._read_timeout = timeout_seconds if read_timeout_seconds is None else read_timeout_seconds
        self._read_limit_ms = max(1, round(self._read_timeout * 1000))
        self._graph_name = graph
        self._connecting = anyio.Lock()
        self._unsettled = 0  # node labels this backend's writes added since it last sent SETTLE_NODE_LABELS
        self._connect(url)

    def _connect(self, url: str) -> None:
        """Connect on first use, not here: the client probes the server as it is built (a blocking call that
        fails when the engine is down), and a gate must start, and keep serving, without its engine."""
        self._url = url
        self._db: FalkorDB | None = None
        self._graph: AsyncGraph | None = None
        self._statements = RespPool(url)  # opens nothing until the first statement

    async def _connected(self) -> tuple[FalkorDB, AsyncGraph]:
        if self._db is None or self._graph is None:
            async with self._connecting:
                if self._db is None or self._graph is None:
                    build = functools.partial(open_client, self._url, self._timeout)
                    try:
                        with anyio.fail_after(self._timeout):
                            db = await anyio.to_thread.run_sync(build, abandon_on_cancel=True)
                    except TimeoutError as exc:
                        raise BackendUnavailable(f"FalkorDB did not answer within {self._timeout:g} s") from exc
                    except _UNAVAILABLE as exc:
                        raise BackendUnavailable(f"FalkorDB unreachable: {type(exc).__name__}") from exc
                    self._db, self._graph = db, db.select_graph(self._graph_name)
        return self._db, self._graph

    async def _run(self, statement: Statement, read_only: bool) -> list[Row]:
        record = Sending()
        # A read is held to its limit by the engine (GRAPH.RO_QUERY's TIMEOUT, in ms), which answers "timed out";
        # the gate waits that long and the usual timeout more for an engine that does not answer at all.
        wait = self._read_timeout + self._timeout if read_only else self._timeout
        # The parameters as a header of literals, built here (falkordb_params.py: the client's own encoder cost a
        # batch's chunk about 150 ms of Python).
        text = params_header(statement.params) + statement.text
        command: tuple[str | int, ...] = (
            ("GRAPH.RO_QUERY", self._graph_name, text, "--compact", "timeout", self._read_limit_ms)
            if read_only
            else ("GRAPH.QUERY", self._graph_name, text, "--compact")
        )
        try:
            with anyio.fail_after(wait):
                # Sent as falkordb's query() sends it; the reply parsed by falkordb_reply, off the loop when large.
                response = await self._statements.execute(command, record)
                raise_errors(response)
        except (TimeoutError, *_UNAVAILABLE) as exc:
            late = isinstance(exc, TimeoutError)
            reason = f"did not answer within {wait:g} s" if late else f"unreachable: {type(exc).__name__}"
            if read_only or not record.reached:
                raise BackendUnavailable(f"FalkorDB {reason}") from exc
            write_reached()
            raise WriteInDoubt(f"FalkorDB {reason} after the write reached it") from exc
        except redis.exceptions.ResponseError as exc:
            if read_only and "empty key" in str(exc):
                return []  # FalkorDB creates a graph on its first write; until then a read finds nothing
            if read_only and _TIMED_OUT in str(exc):
                raise QueryTimeout(self._read_timeout) from exc
            if isinstance(exc, redis.exceptions.OutOfMemoryError) or any(m in str(exc) for m in _STORAGE):
                raise StorageUnavailable(str(exc)) from exc
            if "unique constraint violation" in str(exc):
                raise ConstraintViolation(str(exc)) from exc
            raise BackendError(str(exc)) from exc
        if not read_only:
            write_reached()
        try:
            reply = await parse_rows(response)
        except NeedsSchema:
            _db, graph = await self._connected()
            return await self._rows_by_client(graph, response, read_only)
        if not read_only:
            self._unsettled += reply.stat(NODES_CREATED) + reply.stat(LABELS_ADDED)
        return reply.rows

    async def _rows_by_client(self, graph: AsyncGraph, response: list[Any], read_only: bool) -> list[Row]:
        """A reply holding nodes, relationships or paths, parsed by the client, whose schema cache names their
        labels and properties."""
        result = QueryResult(graph)
        await result.parse(response)
        if not read_only:
            self._unsettled += int(result.nodes_created + result.labels_added)
        names = [column[1] for column in result.header]
        return [dict(zip(names, (plain(v) for v in row), strict=True)) for row in result.result_set]

    async def plan(self, statement: Statement, *, profile: bool = False) -> list[str]:
        """The engine's own plan of a statement, one operation a line: GRAPH.EXPLAIN, or with `profile`
        GRAPH.PROFILE, which runs it and says how many records each operation produced. For checks of what a
        statement costs (tests/integration/test_plans.py); never on the tools' path."""
        _db, graph = await self._connected()
        query = params_header(statement.params) + statement.text
        with anyio.fail_after(self._timeout):
            plan = await (graph.profile(query) if profile else graph.explain(query))
        return [line.decode() if isinstance(line, bytes) else str(line) for line in plan.plan]

    async def write(self, statement: Statement) -> list[Row]:
        # FalkorDB serialises writes and runs each query atomically: one statement is one transaction.
        if self._unsettled >= SETTLE_EVERY:
            await self._settle()
        return await self._run(statement, read_only=False)

    async def _settle(self) -> None:
        """Before a write rather than after the one that crossed the count, so that write's answer waits for
        nothing. Best effort: the write goes out whatever this read meets (it answers for the engine itself)."""
        self._unsettled = 0
        try:
            await self.read(SETTLE_NODE_LABELS)
        except (BackendUnavailable, BackendError) as exc:
            logger.info("node labels not settled before a write: %s", exc)

    async def read(self, statement: Statement) -> list[Row]:
        rows = await self._run(statement, read_only=True)
        read_answered(len(rows))
        return rows

    async def _ddl(self, ddl: str) -> None:
        checked = self._engine_check()
        try:
            await self._ddl_once(ddl)
        except BackendUnavailable as exc:
            if not isinstance(exc.__cause__, _NO_ANSWER):
                raise
            # FalkorDB 4.16 has left a CREATE INDEX unanswered for good: its main thread, creating the graph the
            # statement names, waits for the lock on its graph list, which no thread holds (gdb on the embedded
            # engine: a fresh one, and one loading its file). A DDL statement is idempotent ("already indexed" is
            # done), so it is sent once more, on a new connection (the client dropped the one it cancelled),
            # once the engine has been checked (the embedded one is started again if it is wedged).
            logger.warning("FalkorDB did not answer %s within %g s; sending it once more", ddl, self._timeout)
            await checked()
            await self._ddl_once(ddl)

    def _engine_check(self) -> Callable[[], Awaitable[None]]:
        """What to do before a statement the engine did not answer is sent again, bound to the engine it was sent
        to: nothing here (an external engine is its operator's)."""

        async def nothing() -> None:
            return None

        return nothing

    async def _ddl_once(self, ddl: str) -> None:
        _db, graph = await self._connected()
        try:
            with anyio.fail_after(self._timeout):
                await graph.query(ddl)
        except _UNAVAILABLE as exc:
            raise BackendUnavailable(f"FalkorDB unreachable: {type(exc).__name__}") from exc
        except redis.exceptions.ResponseError as exc:
            if not any(marker in str(exc) for marker in _ALREADY_DONE):
                raise BackendError(str(exc)) from exc

    async def ensure_index(self, label: str, prop: str, *, relationship: bool = False) -> None:
        dialect = self.dialect
        await self._ddl(
            dialect.create_relationship_index(label, prop) if relationship else dialect.create_index(label, prop)
        )

    async def ensure_unique(self, label: str, prop: str) -> None:
        # FalkorDBDialect.create_unique_constraint says why there is no constraint here; the index is what remains.
        await self.ensure_index(label, prop)

    async def ensure_text_index(self, label: str) -> bool:
        # The search text first: it creates the label's index with its options (no stop words); the trigrams are
        # a field added to it (`FalkorDBDialect.create_gram_index`).
        await self._ddl(self.dialect.create_text_index(label))
        await self._ddl(self.dialect.create_gram_index(label))
        return True

    async def ping(self) -> None:
        db, _graph = await self._connected()
        try:
            with anyio.fail_after(self._timeout):
                await db.connection.ping()
        except _UNAVAILABLE as exc:
            raise BackendUnavailable(f"FalkorDB unreachable: {type(exc).__name__}") from exc

    async def close(self) -> None:
        self._statements.close()
        if self._db is None:
            return
        connection = self._db.connection
        await connection.aclose()
        # The pool was handed to the client, so aclose() leaves it open: disconnect it ourselves.
        await connection.connection_pool.disconnect()

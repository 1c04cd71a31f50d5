"""Memgraph, the production engine, through the neo4j async driver (Bolt).

The URL goes to the driver unchanged: `bolt://` (one instance), `bolt+s://` / `bolt+ssc://` (TLS, verified or
self-signed), `neo4j://` / `neo4j+s://` (routing: Memgraph high availability, where coordinators answer the
driver's ROUTE with the current main and replicas)."""

import logging

import anyio
import neo4j
from neo4j import AsyncGraphDatabase
from neo4j.exceptions import (
    ClientError,
    DriverError,
    IncompleteCommit,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from write_gate.core.cypher.dialect import MemgraphDialect
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

logger = logging.getLogger(__name__)

_UNAVAILABLE = (ServiceUnavailable, SessionExpired, OSError)


class _Refused(Exception):
    """Raised inside a transaction function: the driver does not retry it, and the transaction rolls back."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


def _is_unique_violation(exc: Neo4jError) -> bool:
    return "unique constraint violation" in (exc.message or "").lower()


def _is_timeout(exc: Neo4jError) -> bool:
    # Memgraph's HintedAbortError for a transaction past its `tx_timeout`; sent as a TransientError, so the driver
    # would retry it: a statement that ran out of time once would run out of time again.
    message = (exc.message or "").lower()
    return "transaction timeout" in message or "executing longer than time specified" in message  # Memgraph 2.x


def _is_out_of_memory(exc: Neo4jError) -> bool:
    # Memgraph at its memory limit (a TransientError too): the engine is up, it cannot hold more now.
    return "memory limit exceeded" in (exc.message or "").lower()


def _is_refused_login(exc: Neo4jError) -> bool:
    # Memgraph's "Memgraph.ClientError.Security.Unauthenticated" (and Neo4j's Security codes): the engine is there
    # but will not serve these credentials, which is no fault of the statement.
    return ".Security." in (exc.code or "")


_REFUSED_LOGIN = "Memgraph refused the credentials (MEMGRAPH_USER / MEMGRAPH_PASSWORD)"


# A write's driver retries (a conflict, a connection lost before COMMIT) start at once and grow fast: each must
# land within the write's retry window (core.change_feed.write_retry_seconds), not after the driver's second.
_FIRST_WRITE_RETRY_SECONDS = 0.02


class MemgraphBackend:
    def __init__(
        self,
        url: str,
        user: str,
        password: str,
        database: str,
        timeout_seconds: float,
        write_retry_seconds: float | None = None,
        read_timeout_seconds: float | None = None,
    ) -> None:
        """`write_retry_seconds`: how long the driver may send a write again (default: the timeout);
        `read_timeout_seconds`: the limit Memgraph holds each read to (default: the timeout)."""
        self.dialect = MemgraphDialect()
        self._timeout = timeout_seconds
        self._read_timeout = timeout_seconds if read_timeout_seconds is None else read_timeout_seconds
        self._write_retry = timeout_seconds if write_retry_seconds is None else write_retry_seconds
        self._database = database or None
        self._driver = AsyncGraphDatabase.driver(
            url,
            auth=(user, password) if user else None,
            connection_timeout=timeout_seconds,
            connection_acquisition_timeout=timeout_seconds,
            max_transaction_retry_time=timeout_seconds,
        )

    @property
    def _deadline(self) -> float:
        # A backstop for a server that stops answering. Memgraph's own abort at `tx_timeout` and the driver's retry
        # window (max_transaction_retry_time after the first attempt, then one more backoff and attempt) end first.
        return self._timeout * 3

    def _late(self, seconds: float) -> BackendUnavailable:
        return BackendUnavailable(f"Memgraph did not answer within {seconds:g} s")

    def _session(self, access_mode: str) -> neo4j.AsyncSession:
        if access_mode != neo4j.WRITE_ACCESS:
            return self._driver.session(database=self._database, default_access_mode=access_mode)
        return self._driver.session(
            database=self._database,
            default_access_mode=access_mode,
            max_transaction_retry_time=self._write_retry,
            initial_retry_delay=_FIRST_WRITE_RETRY_SECONDS,
            retry_delay_multiplier=2.0,
        )

    async def _managed(self, statement: Statement, access_mode: str) -> list[Row]:
        # Memgraph reads the timeout from BEGIN's `tx_timeout` and aborts the transaction past it: a read's is the
        # read limit, and the gate waits for the abort that long and the usual deadline more.
        reading = access_mode == neo4j.READ_ACCESS
        deadline = max(self._deadline, self._read_timeout + self._timeout) if reading else self._deadline

        @neo4j.unit_of_work(timeout=self._read_timeout if reading else self._timeout)
        async def work(tx: neo4j.AsyncManagedTransaction) -> list[Row]:
            try:
                result = await tx.run(statement.text, dict(statement.params))
                rows = [{key: plain(value) for key, value in record.items()} async for record in result]
                summary = await result.consume()
            except TransientError as exc:
                if _is_timeout(exc) or _is_out_of_memory(exc):
                    raise _Refused(exc) from exc
                raise  # a conflict: the managed transaction runs the function again
            if access_mode == neo4j.READ_ACCESS and summary.query_type != "r":
                # A single Memgraph instance does not enforce READ access mode: check what the statement was.
                # Raising here rolls the transaction back, so a write in a read changes nothing.
                raise _Refused(BackendError(f"a read ran a statement of type {summary.query_type!r}"))
            return rows

        try:
            with anyio.fail_after(deadline):
                async with self._session(access_mode) as s:
                    # Managed transactions retry Memgraph's TransientError ("Cannot resolve conflicting
                    # transactions") and lost connections by themselves, for up to max_transaction_retry_time
                    # (a write's: its retry window, see _session).
                    run = s.execute_read if access_mode == neo4j.READ_ACCESS else s.execute_write
                    return await run(work)
        except TimeoutError as exc:
            raise self._late(deadline) from exc
        except _Refused as exc:
            if isinstance(exc.error, Neo4jError) and _is_timeout(exc.error):
                # A read aborted at its limit ran and was ended (QUERY_TIMEOUT); a write's abort keeps its old answer.
                raise (QueryTimeout(self._read_timeout) if reading else self._late(self._timeout)) from exc
            if isinstance(exc.error, Neo4jError) and _is_out_of_memory(exc.error):
                raise StorageUnavailable(exc.error.message or str(exc.error)) from exc
            raise BackendError(str(exc)) from exc
        except _UNAVAILABLE as exc:
            raise BackendUnavailable(f"Memgraph unreachable: {type(exc).__name__}") from exc
        except TransientError as exc:
            # Conflicting transactions past the retry window: rolled back each time, so nothing was applied.
            raise BackendUnavailable(f"Memgraph kept refusing conflicting transactions: {exc.message}") from exc
        except ClientError as exc:
            if _is_refused_login(exc):
                raise BackendUnavailable(_REFUSED_LOGIN) from exc
            if _is_unique_violation(exc):
                raise ConstraintViolation(exc.message or str(exc)) from exc
            raise BackendError(exc.message or str(exc)) from exc
        except (Neo4jError, DriverError) as exc:
            raise BackendError(str(exc)) from exc

    async def write(self, statement: Statement) -> list[Row]:
        """A managed transaction: the driver runs it again only where Memgraph cannot have committed it (a
        conflict, a connection lost before COMMIT). A connection lost while committing (IncompleteCommit), or no
        answer by the deadline, leaves it in doubt: never sent again."""
        try:
            rows = await self._write_once(statement)
        except ConstraintViolation:
            # Two concurrent MERGEs of a new key: the loser is refused at commit by the unique constraint and the
            # driver does not retry that. Run it once more: the key now exists, so the MERGE matches.
            rows = await self._write_once(statement)
        write_reached()
        return rows

    async def _write_once(self, statement: Statement) -> list[Row]:
        try:
            return await self._managed(statement, neo4j.WRITE_ACCESS)
        except BackendUnavailable as exc:
            cause = exc.__cause__
            if isinstance(cause, IncompleteCommit):
                write_reached()
                raise WriteInDoubt("Memgraph went away while committing the write") from cause
            if isinstance(cause, TimeoutError):
                write_reached()
                raise WriteInDoubt(f"{exc}, which may still commit the write") from cause
            raise

    async def read(self, statement: Statement) -> list[Row]:
        rows = await self._managed(statement, neo4j.READ_ACCESS)
        read_answered(len(rows))
        return rows

    async def _ddl(self, text: str) -> None:
        # Memgraph refuses DDL inside explicit transactions: run it auto-commit. An index or constraint that
        # exists already comes back as a notification, not an error.
        try:
            with anyio.fail_after(self._deadline):
                async with self._driver.session(database=self._database) as session:
                    result = await session.run(text)  # validated, quoted names only
                    await result.consume()
        except TimeoutError as exc:
            raise self._late(self._deadline) from exc
        except _UNAVAILABLE as exc:
            raise BackendUnavailable(f"Memgraph unreachable: {type(exc).__name__}") from exc
        except Neo4jError as exc:
            if _is_refused_login(exc):
                raise BackendUnavailable(_REFUSED_LOGIN) from exc
            if "already exists" not in (exc.message or ""):
                raise BackendError(exc.message or str(exc)) from exc
        except DriverError as exc:
            raise BackendError(str(exc)) from exc

    async def ensure_index(self, label: str, prop: str, *, relationship: bool = False) -> None:
        dialect = self.dialect
        await self._ddl(
            dialect.create_relationship_index(label, prop) if relationship else dialect.create_index(label, prop)
        )

    async def ensure_unique(self, label: str, prop: str) -> None:
        await self._ddl(self.dialect.create_unique_constraint(label, prop))
        await self.ensure_index(label, prop)  # Memgraph's constraint brings no index of its own

    async def ensure_text_index(self, label: str) -> bool:
        try:
            await self._ddl(self.dialect.create_text_index(label))
            await self._ddl(self.dialect.create_gram_index(label))
        except BackendError as exc:
            # Before Memgraph 3.6, text search needs --experimental-enabled=text-search: without it the ranked
            # search scans (it says so in each answer) rather than the server refusing to start.
            logger.warning("no text index on :%s, the ranked search will scan it: %s", label, exc)
            return False
        return True

    async def ping(self) -> None:
        try:
            with anyio.fail_after(self._timeout):
                await self._driver.verify_connectivity()
        except TimeoutError as exc:
            raise self._late(self._timeout) from exc
        except Neo4jError as exc:
            reason = _REFUSED_LOGIN if _is_refused_login(exc) else f"Memgraph refused the connection: {exc.message}"
            raise BackendUnavailable(reason) from exc
        except _UNAVAILABLE + (DriverError,) as exc:
            raise BackendUnavailable(f"Memgraph unreachable: {type(exc).__name__}") from exc

    async def close(self) -> None:
        await self._driver.close()

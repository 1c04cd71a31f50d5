"""Memgraph, the production engine, through the neo4j async driver (Bolt)."""

import anyio
import neo4j
from neo4j import AsyncGraphDatabase
from neo4j.exceptions import ClientError, DriverError, Neo4jError, ServiceUnavailable, SessionExpired

from write_gate.backends.base import BackendError, BackendUnavailable, ConstraintViolation, Row, plain
from write_gate.cypher import Statement
from write_gate.dialect import MemgraphDialect

_UNAVAILABLE = (ServiceUnavailable, SessionExpired, OSError, TimeoutError)


class _NotReadOnly(Exception):
    pass


def _is_unique_violation(exc: Neo4jError) -> bool:
    return "unique constraint violation" in (exc.message or "").lower()


class MemgraphBackend:
    def __init__(self, url: str, user: str, password: str, database: str, timeout_seconds: float) -> None:
        self.dialect = MemgraphDialect()
        self._timeout = timeout_seconds
        self._database = database or None
        self._driver = AsyncGraphDatabase.driver(
            url,
            auth=(user, password) if user else None,
            connection_timeout=timeout_seconds,
            connection_acquisition_timeout=timeout_seconds,
            max_transaction_retry_time=timeout_seconds,
        )

    def _query(self, statement: Statement) -> neo4j.Query:
        return neo4j.Query(statement.text, timeout=self._timeout)  # type: ignore[arg-type]

    async def _managed(self, statement: Statement, access_mode: str) -> list[Row]:
        async def work(tx: neo4j.AsyncManagedTransaction) -> list[Row]:
            result = await tx.run(self._query(statement), dict(statement.params))
            rows = [{key: plain(value) for key, value in record.items()} async for record in result]
            if access_mode == neo4j.READ_ACCESS:
                # A single Memgraph instance does not enforce READ access mode: check what the statement
                # was. Raising here rolls the transaction back, so a write in a read changes nothing.
                summary = await result.consume()
                if summary.query_type != "r":
                    raise _NotReadOnly(f"a read ran a statement of type {summary.query_type!r}")
            return rows

        try:
            with anyio.fail_after(self._timeout * 2):  # the driver's own timeouts fire first
                async with self._driver.session(database=self._database, default_access_mode=access_mode) as s:
                    # Managed transactions retry Memgraph's TransientError ("Cannot resolve conflicting
                    # transactions") by themselves.
                    run = s.execute_read if access_mode == neo4j.READ_ACCESS else s.execute_write
                    return await run(work)
        except _UNAVAILABLE as exc:
            raise BackendUnavailable(f"Memgraph unreachable: {type(exc).__name__}") from exc
        except ClientError as exc:
            if _is_unique_violation(exc):
                raise ConstraintViolation(exc.message or str(exc)) from exc
            raise BackendError(exc.message or str(exc)) from exc
        except _NotReadOnly as exc:
            raise BackendError(str(exc)) from exc
        except (Neo4jError, DriverError) as exc:
            raise BackendError(str(exc)) from exc

    async def write(self, statement: Statement) -> list[Row]:
        try:
            return await self._managed(statement, neo4j.WRITE_ACCESS)
        except ConstraintViolation:
            # Two concurrent MERGEs of a new key: the loser is refused by the unique constraint and the
            # driver does not retry that. Run it once more: the key now exists, so the MERGE matches.
            return await self._managed(statement, neo4j.WRITE_ACCESS)

    async def read(self, statement: Statement) -> list[Row]:
        return await self._managed(statement, neo4j.READ_ACCESS)

    async def _ddl(self, text: str) -> None:
        # Memgraph refuses DDL inside explicit transactions: run it auto-commit.
        try:
            with anyio.fail_after(self._timeout * 2):
                async with self._driver.session(database=self._database) as session:
                    result = await session.run(text)  # type: ignore[arg-type]  # validated, quoted names only
                    await result.consume()
        except _UNAVAILABLE as exc:
            raise BackendUnavailable(f"Memgraph unreachable: {type(exc).__name__}") from exc
        except ClientError as exc:
            if "already exists" not in (exc.message or ""):
                raise BackendError(exc.message or str(exc)) from exc

    async def ensure_index(self, label: str, prop: str) -> None:
        await self._ddl(self.dialect.create_index(label, prop))

    async def ensure_unique(self, label: str, prop: str) -> None:
        await self._ddl(self.dialect.create_unique_constraint(label, prop))
        await self.ensure_index(label, prop)  # Memgraph's constraint brings no index of its own

    async def ping(self) -> None:
        try:
            with anyio.fail_after(self._timeout):
                await self._driver.verify_connectivity()
        except _UNAVAILABLE + (DriverError,) as exc:
            raise BackendUnavailable(f"Memgraph unreachable: {type(exc).__name__}") from exc

    async def close(self) -> None:
        await self._driver.close()

"""FalkorDB's async client as the gate needs it: it never sends a statement twice by itself, and it says whether a
statement reached the engine.

A client that sent a command again on a lost connection or a socket timeout (redis-py's `Redis()` retries up
to ten times by default) would apply a write the engine had applied before it went away (or while the client
waited past its timeout) again on the engine that answers next. Connections built from a pool, as here, retry
nothing (redis-py 8.1; tests/integration/test_engine_sends.py holds it to that), and this pool marks the statement
in flight as `reached` once it has a connection to go out on: a failure before that (no connection could be made)
left the statement unsent, a failure after it may follow a write the engine applied.
"""

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from falkordb.asyncio import FalkorDB
from redis.asyncio.connection import ConnectionPool, parse_url
from redis.maint_notifications import MaintNotificationsConfig


@dataclass
class Sending:
    """One statement on its way: `reached` once it had a connection to the engine to go out on."""

    reached: bool = False


_SENDING: ContextVar[Sending | None] = ContextVar("write_gate_falkordb_sending", default=None)


def sending() -> tuple[Sending, Any]:
    """A new record for the statement this task sends next, and the token that ends it (`_SENDING.reset`)."""
    record = Sending()
    return record, _SENDING.set(record)


def done_sending(token: Any) -> None:
    _SENDING.reset(token)


class _MarkingPool(ConnectionPool):
    """Marks the statement in flight as reached once it has a live connection to go out on: the client writes it
    to that connection next, so a failure before this point left it unsent (a failure in between counts as
    reached, which is the safe side)."""

    async def get_connection(self, *args: Any, **kwargs: Any) -> Any:
        connection = await super().get_connection(*args, **kwargs)
        if (record := _SENDING.get()) is not None:
            record.reached = True
        return connection


def open_client(url: str, timeout: float | None) -> FalkorDB:
    """A client for `url` (redis://, rediss://, unix://) that retries nothing and marks what it sends. Blocking:
    falkordb's constructor asks the server whether it is a cluster (a synchronous client built from the pool's
    settings, so they hold nothing asynchronous)."""
    pool = _MarkingPool(
        **parse_url(url),
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        health_check_interval=0,
        decode_responses=True,
        # Off: FalkorDB sends no maintenance notices, and while they are "auto" (redis-py 8.1's default) the pool
        # hands out a connection the engine has closed without checking it (ConnectionPool.ensure_connection), so
        # a statement sent after an engine restart would go out on a dead socket and be in doubt for nothing.
        maint_notifications_config=MaintNotificationsConfig(enabled=False),
    )
    return FalkorDB(connection_pool=pool)

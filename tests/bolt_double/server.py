"""A Bolt server on 127.0.0.1 that answers the real neo4j driver as Memgraph does and runs each statement on a real
FalkorDB: a transport double, not a mock of the graph.

It proves the Memgraph backend's driver path (handshake, auth, managed transactions, timeouts, summaries, error
mapping and retries) and that every statement shape the gate sends runs. It does not prove Memgraph's own
semantics (planner, isolation, constraints, functions such as toLower): only real Memgraph (the testcontainers
tier) does. One refusal of Memgraph's is reproduced, because FalkorDB would hide it: a plain DELETE of a node that
still has relationships (see translate.py), so a DETACH DELETE the gate needs cannot lose its DETACH unnoticed.

Protocol: Bolt 5.0 to 5.2 (Memgraph speaks up to 5.2), messages HELLO, LOGON, LOGOFF, BEGIN, RUN, PULL, DISCARD,
COMMIT, ROLLBACK, RESET, GOODBYE and ROUTE (for `neo4j://` URLs). FalkorDB has no multi-statement transactions:
a statement runs when RUN arrives, and ROLLBACK cannot undo it. In a READ transaction a statement that FalkorDB's
GRAPH.RO_QUERY refuses is not run at all and is reported with summary type "w", so the client's type check rolls
back with nothing changed, the same outcome as on Memgraph. Where FalkorDB goes away after a write reached it
(it may have applied it), the transaction's COMMIT is never answered, as by a Memgraph that died while
committing: the driver raises IncompleteCommit and runs nothing again. A write FalkorDB never received drops the
connection at once, as a dead Memgraph's, and the driver runs the transaction again."""

import asyncio
import contextlib
import json
import os
import re
import ssl
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.bolt_double import packstream
from tests.bolt_double.engine import (
    CLIENT_ERROR,
    TRANSIENT_ERROR,
    UNAUTHENTICATED,
    EngineGone,
    FalkorDBEngine,
    MemgraphError,
    Outcome,
)
from tests.bolt_double.faults import Action, Faults

MAGIC = b"\x60\x60\xb0\x17"
VERSIONS = [(5, 2), (5, 1), (5, 0)]  # newest first: Memgraph speaks Bolt up to 5.2
SERVER_AGENT = "Neo4j/v5.11.0 compatible graph database server - Memgraph"

HELLO, GOODBYE, RESET, RUN, BEGIN, COMMIT, ROLLBACK = 0x01, 0x02, 0x0F, 0x10, 0x11, 0x12, 0x13
DISCARD, PULL, TELEMETRY, ROUTE, LOGON, LOGOFF = 0x2F, 0x3F, 0x54, 0x66, 0x6A, 0x6B
SUCCESS, RECORD, IGNORED, FAILURE = 0x70, 0x71, 0x7E, 0x7F

TIMEOUT_ABORT = "Transaction was asked to abort because of transaction timeout."
CONFLICT = (
    "Cannot resolve conflicting transactions. You can retry this transaction when the conflicting transaction "
    "is finished"
)
# As Memgraph before 3.6 answers text search without its experimental flag.
NO_TEXT_SEARCH = (
    "To use text indices and text search, start Memgraph with the experimental text search feature enabled."
)
OUT_OF_MEMORY = "Memory limit exceeded! Attempting to allocate a chunk of 160.00MiB which would exceed the limit."
# Where each statement the double receives is written (one JSON line each, distinct ones once): the suite's
# list of statement shapes that ran through the Bolt tier.
LOG_ENV = "BOLT_DOUBLE_LOG"


class _Drop(Exception):
    pass


@dataclass
class _Context:
    """What a statement runs under: an explicit transaction's BEGIN, or an auto-commit RUN's own extra."""

    read_only: bool
    database: str | None
    timeout: float | None
    explicit: bool
    failed_commit: str | None = None
    # FalkorDB went away after a write of this transaction reached it (it may have applied it), or a LOST_COMMIT
    # fault: its COMMIT is never answered, as a Memgraph that died while committing (the driver's
    # IncompleteCommit, never retried).
    in_doubt: bool = False


@dataclass
class _Result:
    outcome: Outcome
    context: _Context
    started: float
    qid: int
    sent: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def _context(extra: dict[str, Any], explicit: bool) -> _Context:
    timeout_ms = extra.get("tx_timeout")
    return _Context(
        read_only=extra.get("mode") == "r",
        database=extra.get("db") or None,
        timeout=timeout_ms / 1000 if isinstance(timeout_ms, int) and timeout_ms > 0 else None,
        explicit=explicit,
    )


def _violation(statement: str) -> str:
    label = re.search(r":`?(\w+)`?", statement)
    key = re.search(r"\{\s*`?(\w+)`?\s*:", statement)
    return (
        f"Unable to commit due to unique constraint violation on "
        f":{label[1] if label else 'Label'}({key[1] if key else 'key'})"
    )


class BoltDouble:
    def __init__(
        self,
        falkordb_url: str,
        *,
        user: str | None = None,
        password: str | None = None,
        tls: ssl.SSLContext | None = None,
        log_path: Path | None = None,
    ) -> None:
        self.engine = FalkorDBEngine(falkordb_url)
        self.faults = Faults()
        self._user, self._password, self._tls = user, password, tls
        env_log = os.environ.get(LOG_ENV)
        self._log_path = log_path or (Path(env_log) if env_log else None)
        self._logged: set[tuple[str, bool, str]] = set()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._connections = 0
        self.port = 0
        self.messages: list[str] = []  # names of the messages received, in order (what the driver sent)
        self.begins: list[dict[str, Any]] = []  # BEGIN's extra of each explicit transaction (mode, db, tx_timeout)

    def url(self, scheme: str = "bolt") -> str:
        return f"{scheme}://127.0.0.1:{self.port}"

    async def start(self, port: int = 0) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", port, ssl=self._tls)
        self.port = self._server.sockets[0].getsockname()[1]

    async def drop_connections(self) -> None:
        """Close every open connection, as a restarting server or a broken network would."""
        for writer in list(self._writers):
            writer.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        await self.drop_connections()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)
            self._server = None
        await self.engine.close()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        self._connections += 1
        try:
            await _Connection(self, reader, writer, self._connections).serve()
        except (asyncio.IncompleteReadError, ConnectionError, EngineGone, _Drop, asyncio.CancelledError, ssl.SSLError):
            pass
        finally:
            self._tasks.discard(task)
            self._writers.discard(writer)
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 1)

    def authenticate(self, auth: dict[str, Any]) -> bool:
        if self._user is None:
            return True
        return (
            auth.get("scheme") == "basic"
            and auth.get("principal") == self._user
            and auth.get("credentials") == self._password
        )

    def log(self, text: str, read_only: bool, error: str | None) -> None:
        if self._log_path is None:
            return
        key = (text, read_only, error or "")
        if key in self._logged:
            return
        self._logged.add(key)
        line = {"mode": "r" if read_only else "w", "text": text, "error": error}
        with self._log_path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")


class _Connection:
    def __init__(self, double: BoltDouble, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int):
        self.double, self.reader, self.writer = double, reader, writer
        self.connection_id = f"bolt-{n}"
        self.version: tuple[int, int] = (0, 0)
        self.authenticated = False
        self.failed = False
        self.tx: _Context | None = None
        self.result: _Result | None = None
        self.qids = 0

    # --- framing -------------------------------------------------------------------------------

    async def _handshake(self) -> bool:
        if await self.reader.readexactly(4) != MAGIC:
            return False
        proposals = await self.reader.readexactly(16)
        for major, minor in VERSIONS:
            for i in range(0, 16, 4):
                _, span, top, prop_major = proposals[i : i + 4]
                if prop_major == major and top - span <= minor <= top:
                    self.version = (major, minor)
                    self.writer.write(bytes((0, 0, minor, major)))
                    await self.writer.drain()
                    return True
        self.writer.write(b"\x00\x00\x00\x00")  # none agreed (a manifest offer is declined, as Memgraph does)
        await self.writer.drain()
        return False

    async def _read_message(self) -> packstream.Structure | None:
        data = bytearray()
        while True:
            (size,) = struct.unpack(">H", await self.reader.readexactly(2))
            if size == 0:
                if data:
                    break
                continue  # a NOOP chunk between messages
            data += await self.reader.readexactly(size)
        message = packstream.unpack(bytes(data))
        return message if isinstance(message, packstream.Structure) else None

    def _send(self, tag: int, *fields: Any) -> None:
        data = packstream.pack(packstream.Structure(tag, fields))
        for at in range(0, len(data), 0xFFFF):
            chunk = data[at : at + 0xFFFF]
            self.writer.write(struct.pack(">H", len(chunk)) + chunk)
        self.writer.write(b"\x00\x00")

    def _fail(self, code: str, message: str) -> None:
        self.failed = True
        self.tx = None
        self.result = None
        self._send(FAILURE, {"code": code, "message": message})

    async def _refuse_credentials(self) -> None:
        # Memgraph answers a failed authentication and then closes the connection.
        self._fail(UNAUTHENTICATED, "Authentication failure")
        await self.writer.drain()
        raise _Drop

    # --- messages ------------------------------------------------------------------------------

    async def serve(self) -> None:
        if not await self._handshake():
            return
        while True:
            message = await self._read_message()
            if message is None:
                return
            name = {
                HELLO: "HELLO",
                GOODBYE: "GOODBYE",
                RESET: "RESET",
                RUN: "RUN",
                BEGIN: "BEGIN",
                COMMIT: "COMMIT",
                ROLLBACK: "ROLLBACK",
                DISCARD: "DISCARD",
                PULL: "PULL",
                TELEMETRY: "TELEMETRY",
                ROUTE: "ROUTE",
                LOGON: "LOGON",
                LOGOFF: "LOGOFF",
            }.get(message.tag, f"0x{message.tag:02X}")
            self.double.messages.append(name)
            if message.tag == GOODBYE:
                return
            if message.tag == RESET:
                self.failed, self.tx, self.result = False, None, None
                self._send(SUCCESS, {})
            elif self.failed:
                self._send(IGNORED)
            else:
                await self._dispatch(message)
            await self.writer.drain()

    async def _dispatch(self, message: packstream.Structure) -> None:
        tag, fields = message.tag, message.fields
        if tag == HELLO:
            extra = fields[0] if fields else {}
            if self.version < (5, 1):  # before LOGON, the credentials come with HELLO
                if not self.double.authenticate(extra):
                    return await self._refuse_credentials()
                self.authenticated = True
            return self._send(SUCCESS, {"server": SERVER_AGENT, "connection_id": self.connection_id})
        if tag == LOGON:
            if not self.double.authenticate(fields[0] if fields else {}):
                return await self._refuse_credentials()
            self.authenticated = True
            return self._send(SUCCESS, {})
        if tag == LOGOFF:
            self.authenticated = False
            return self._send(SUCCESS, {})
        if not self.authenticated:
            return await self._refuse_credentials()
        if tag == ROUTE:
            return self._route(fields)
        if tag == TELEMETRY:
            return self._send(SUCCESS, {})
        if tag == BEGIN:
            if self.tx is not None:
                return self._fail(CLIENT_ERROR, "Nested transactions are not supported.")
            extra = fields[0] if fields else {}
            self.double.begins.append(extra)
            self.tx = _context(extra, explicit=True)
            return self._send(SUCCESS, {})
        if tag == RUN:
            return await self._run(fields[0], fields[1] or {}, fields[2] if len(fields) > 2 else {})
        if tag in (PULL, DISCARD):
            return self._pull(fields[0] if fields else {}, discard=tag == DISCARD)
        if tag == COMMIT:
            tx, self.tx = self.tx, None
            if tx is None:
                return self._fail(CLIENT_ERROR, "No current transaction to commit.")
            if tx.failed_commit:
                return self._fail(CLIENT_ERROR, tx.failed_commit)
            if tx.in_doubt:
                raise _Drop
            return self._send(SUCCESS, {})
        if tag == ROLLBACK:
            self.tx = None
            return self._send(SUCCESS, {})
        return self._fail(CLIENT_ERROR, f"Unknown message 0x{tag:02X}")

    def _route(self, fields: tuple[Any, ...]) -> None:
        # One instance plays every role: what a Memgraph coordinator answers, with one data instance behind it.
        db_context = fields[2] if len(fields) > 2 and isinstance(fields[2], dict) else {}
        address = f"127.0.0.1:{self.double.port}"
        servers = [{"addresses": [address], "role": role} for role in ("WRITE", "READ", "ROUTE")]
        self._send(SUCCESS, {"rt": {"ttl": 300, "db": db_context.get("db") or "memgraph", "servers": servers}})

    async def _run(self, text: str, params: dict[str, Any], extra: dict[str, Any]) -> None:
        context = self.tx or _context(extra, explicit=False)
        started = time.monotonic()
        fault = self.double.faults.take(text)
        if fault is not None and fault.action is Action.DROP:
            raise _Drop
        if fault is not None and fault.action is Action.FREEZE:
            await asyncio.Event().wait()  # until the connection is closed
        if fault is not None and fault.action is Action.HOLD:
            fault.reached.set()
            while not fault.released.is_set():  # the test releases it from its own thread
                await asyncio.sleep(0.005)
        if fault is not None and fault.action is Action.TRANSIENT:
            return self._fail(TRANSIENT_ERROR, CONFLICT)
        if fault is not None and fault.action is Action.OUT_OF_MEMORY:
            return self._fail(TRANSIENT_ERROR, OUT_OF_MEMORY)
        if fault is not None and fault.action is Action.NO_TEXT_SEARCH:
            return self._fail(CLIENT_ERROR, NO_TEXT_SEARCH)
        if fault is not None and fault.action is Action.LOST_COMMIT:
            context.in_doubt = True
        try:
            if fault is not None and fault.action is Action.UNIQUE_VIOLATION:
                # Memgraph finds the violation at commit and rolls the transaction back: run nothing.
                context.failed_commit = _violation(text)
                outcome = Outcome(type="rw")
            else:
                delay = fault.seconds if fault is not None and fault.action is Action.DELAY else 0.0
                outcome = await asyncio.wait_for(self._execute(text, params, context, delay), context.timeout)
        except TimeoutError:
            return self._fail(TRANSIENT_ERROR, TIMEOUT_ABORT)
        except EngineGone as exc:
            if not (exc.applied and context.explicit):
                raise  # nothing of it was applied: the connection drops, as a dead Memgraph's, and the driver retries
            # FalkorDB runs a statement at RUN and cannot roll it back, so a write it may have applied stands in
            # for a Memgraph that died while committing: the RUN answers (no rows), the COMMIT never does.
            context.in_doubt = True
            outcome = Outcome(type="w")
        except MemgraphError as exc:
            self.double.log(text, context.read_only, exc.message)
            return self._fail(exc.code, exc.message)
        self.double.log(text, context.read_only, None)
        self.qids += 1
        self.result = _Result(outcome, context, started, self.qids)
        t_first = int((time.monotonic() - started) * 1000)
        metadata: dict[str, Any] = {"fields": outcome.fields, "t_first": t_first}
        if context.explicit:
            metadata["qid"] = self.qids
        self._send(SUCCESS, metadata)

    async def _execute(self, text: str, params: dict[str, Any], context: _Context, delay: float) -> Outcome:
        if delay:
            await asyncio.sleep(delay)
        return await self.double.engine.execute(context.database, text, params, context.read_only)

    def _pull(self, extra: dict[str, Any], discard: bool) -> None:
        result = self.result
        if result is None:
            return self._fail(CLIENT_ERROR, "There is no result to pull.")
        records = result.outcome.records
        n = extra.get("n", -1)
        end = len(records) if discard or n is None or n < 0 else min(len(records), result.sent + n)
        if not discard:
            for record in records[result.sent : end]:
                self._send(RECORD, record)
        result.sent = len(records) if discard else end
        if result.sent < len(records):
            return self._send(SUCCESS, {"has_more": True})
        self.result = None
        if not result.context.explicit and result.context.failed_commit:
            return self._fail(CLIENT_ERROR, result.context.failed_commit)  # an auto-commit commits here
        summary: dict[str, Any] = {
            "has_more": False,
            "type": result.outcome.type,
            "t_last": int((time.monotonic() - result.started) * 1000),
        }
        if result.outcome.stats:
            summary["stats"] = result.outcome.stats
        if result.outcome.notifications:
            summary["notifications"] = result.outcome.notifications
        self._send(SUCCESS, summary)

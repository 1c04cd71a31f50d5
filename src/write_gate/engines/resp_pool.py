"""The statement path's own connections to FalkorDB: RESP over asyncio, replies parsed by hiredis.

Every tool call sends its statements here, so what a statement costs the gate's process beside the engine's work is
paid on every call: redis-py's client took 0.14 ms of CPU a statement (its pool, its retry wrapper, its command
packer, its stream reader), a bare socket with hiredis 0.07 ms (BENCHMARKS.md, "The engine's own connections").
DDL, plans and replies holding nodes keep falkordb's client, which knows the graph's schema ids.

What the gate needs of a connection, and gets here:
- **Nothing is sent twice.** A command goes out once on one connection; whatever happens after (the engine goes
  away, the caller's deadline passes, the call is cancelled) the connection is closed, never used again, and the
  failure is the caller's to answer.
- **It says whether a command reached the engine.** `Sending.reached` is set once the command has a live connection
  to go out on: a failure before it (no connection could be made) left the command unsent; one after it may follow
  a write the engine applied, and the caller answers it in doubt.
- **A dead connection is not handed out.** An idle connection whose engine closed it (the engine was restarted
  or killed) is dropped at checkout, so the next command opens a new one instead of going out on a dead socket and
  being in doubt for nothing.
- **Errors read as redis-py reads them** (the same classes and messages), so what the backend makes of an engine's
  error does not depend on which client carried the statement.
"""

import asyncio
import select
import ssl
from typing import Any, cast

import hiredis
from redis._parsers.base import BaseParser
from redis.asyncio.connection import SSLConnection, UnixDomainSocketConnection, parse_url
from redis.exceptions import RedisError

from write_gate.engines.falkordb_client import Sending


class EngineConnectionLost(ConnectionError):
    """The engine closed the connection, or sent what is not RESP, before its reply was whole."""


def pack(args: tuple[str | int, ...]) -> bytes:
    """A command in RESP: an array of bulk strings."""
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg.encode() if isinstance(arg, str) else str(arg).encode()
        parts.append(b"$%d\r\n%b\r\n" % (len(data), data))
    return b"".join(parts)


def _tls(options: dict[str, Any]) -> ssl.SSLContext:
    """A `rediss://` URL's TLS, with the query options redis-py reads: `ssl_ca_certs`, `ssl_cert_reqs` (`none`,
    `optional`, `required`: the default), `ssl_certfile` and `ssl_keyfile` (a client certificate)."""
    context = ssl.create_default_context(cafile=options.get("ssl_ca_certs"))
    requirement = str(options.get("ssl_cert_reqs") or "required").lower()
    if requirement == "none":
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif requirement == "optional":
        context.verify_mode = ssl.CERT_OPTIONAL
    if options.get("ssl_certfile"):
        context.load_cert_chain(options["ssl_certfile"], options.get("ssl_keyfile"))
    return context


def _greeting(options: dict[str, Any]) -> list[bytes]:
    """What a new connection sends before its first command: AUTH and SELECT as the URL asks, and a PING. Answered,
    they show the engine serves the connection: a socket can accept it with no engine behind (a listening socket
    held on by a child of a killed engine), and a command sent there would be in doubt for nothing."""
    hello = []
    if options.get("password") is not None:
        user = options.get("username")
        hello.append(pack(("AUTH", user, options["password"]) if user else ("AUTH", options["password"])))
    if int(options.get("db") or 0):
        hello.append(pack(("SELECT", int(options["db"]))))
    hello.append(pack(("PING",)))
    return hello


class _Connection(asyncio.Protocol):
    """One connection, one command at a time: a reply is read as the bytes arrive (no stream buffer between)."""

    def __init__(self) -> None:
        self._parser = hiredis.Reader(replyError=BaseParser.parse_error, encoding="utf-8")
        self._transport: asyncio.Transport | None = None
        self._waiting: asyncio.Future[Any] | None = None
        self._socket = -1
        self.lost = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # uvloop's transports are not asyncio's classes
        self._socket = transport.get_extra_info("socket").fileno()

    def stale(self) -> bool:
        """True for a connection not to send on: one known lost, or an idle one with something to read, which can
        only be the engine's end (it answers nothing unasked). Asked of the socket itself, not of the event loop,
        which sees an end only at its next turn: a command sent before then would go out on a dead socket."""
        if self.lost:
            return True
        poller = select.poll()
        poller.register(self._socket, select.POLLIN)
        return bool(poller.poll(0))

    def data_received(self, data: bytes) -> None:
        try:
            self._parser.feed(data)
            reply = self._parser.gets()
            if reply is False:
                return
            more = self._parser.gets()
        except hiredis.ProtocolError as exc:
            self._fail(EngineConnectionLost(f"the engine's reply is not RESP: {exc}"))
            return
        waiting, self._waiting = self._waiting, None
        if waiting is None or waiting.done():  # nothing was asked: a connection out of step is not used again
            self._fail(EngineConnectionLost("the engine answered what was not asked"))
            return
        waiting.set_result(reply)
        if more is not False:  # a second reply to one command: this one is answered, the connection not used again
            self._fail(EngineConnectionLost("the engine answered what was not asked"))

    def eof_received(self) -> bool:
        self._fail(EngineConnectionLost("the engine closed the connection"))
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(EngineConnectionLost(f"the engine's connection was lost: {exc or 'closed'}"))

    def _fail(self, error: Exception) -> None:
        self.lost = True
        if self._transport is not None:
            self._transport.close()
        if self._waiting is not None and not self._waiting.done():
            self._waiting.set_exception(error)
        self._waiting = None

    async def ask(self, command: bytes) -> Any:
        """The reply to one command; an error the engine answered is raised."""
        assert self._transport is not None and self._waiting is None
        self._waiting = asyncio.get_running_loop().create_future()
        self._transport.write(command)
        reply = await self._waiting
        if isinstance(reply, RedisError):  # what parse_error made of an error reply (AUTH's is a ConnectionError)
            raise reply
        return reply

    def close(self) -> None:
        self.lost = True
        if self._transport is not None:
            self._transport.close()


class RespPool:
    """Connections to one engine (`redis://`, `rediss://`, `unix://`), opened when needed and kept while idle;
    as many as commands in flight (redis-py's pool had no bound either)."""

    def __init__(self, url: str) -> None:
        options: dict[str, Any] = dict(parse_url(url))
        self._path: str | None = (
            options.get("path") if options.get("connection_class") is UnixDomainSocketConnection else None
        )
        self._host: str = options.get("host", "localhost")
        self._port: int = int(options.get("port", 6379))
        self._ssl = _tls(options) if options.get("connection_class") is SSLConnection else None
        self._hello = _greeting(options)
        self._idle: list[_Connection] = []
        self._closed = False

    async def _open(self) -> _Connection:
        loop = asyncio.get_running_loop()
        if self._path is not None:
            _transport, connection = await loop.create_unix_connection(_Connection, self._path)
        else:
            _transport, connection = await loop.create_connection(_Connection, self._host, self._port, ssl=self._ssl)
        try:
            for command in self._hello:
                await connection.ask(command)
        except BaseException:
            connection.close()
            raise
        return connection

    async def execute(self, args: tuple[str | int, ...], record: Sending) -> Any:
        """The engine's reply to one command, sent once. `record.reached` is set once the command has a live
        connection to go out on. The connection is kept only when the reply came whole."""
        if self._closed:
            raise EngineConnectionLost("the engine's connections are closed")
        command = pack(args)
        connection = None
        while self._idle:
            candidate = self._idle.pop()
            if not candidate.stale():
                connection = candidate
                break
            candidate.close()
        if connection is None:
            connection = await self._open()
        record.reached = True
        try:
            reply = await connection.ask(command)
        except RedisError:
            self._keep(connection)  # the engine answered, with an error: the connection is in step
            raise
        except BaseException:
            connection.close()  # a reply may still come on it, or never: it is not used again
            raise
        self._keep(connection)
        return reply

    def _keep(self, connection: _Connection) -> None:
        if self._closed or connection.lost:
            connection.close()
        else:
            self._idle.append(connection)

    def close(self) -> None:
        self._closed = True
        while self._idle:
            self._idle.pop().close()

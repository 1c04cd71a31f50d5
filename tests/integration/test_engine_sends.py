"""What the FalkorDB backends send, and send again, when the engine goes away (engines/falkordb_client.py): a
statement is never sent twice by the client or by the embedded engine's recovery; a write that reached the engine
before it went away is in doubt (WriteInDoubt), one that never reached it is plainly unavailable; a read is asked
again of the engine that serves once the embedded one is started again.

The engine is stopped (SIGSTOP) so that a statement sits unread in its socket, then killed or let go on: the
one way to put a statement on the wire at a known moment without a double of the engine."""

import os
import signal
from pathlib import Path

import anyio
import pytest

from tests.conftest import start_falkordb_server, stop_server
from tests.integration.test_embedded import start, wait_gone
from write_gate.core.cypher.statement import Statement
from write_gate.engines import BackendUnavailable, WriteInDoubt
from write_gate.engines.falkordb import FalkorDBBackend

pytestmark = pytest.mark.anyio

MARK = Statement("CREATE (:Sent {n: 1})")
COUNT = Statement("MATCH (s:Sent) RETURN count(s) AS n")


async def test_the_clients_connections_send_nothing_again(tmp_path: Path) -> None:
    """redis-py's `Redis()` retries a command up to ten times by default; the pool the gate builds retries none."""
    process, url = start_falkordb_server(tmp_path)
    backend = FalkorDBBackend(url, "g", 5)
    try:
        db, _graph = await backend._connected()  # noqa: SLF001 - the client the backend built
        connection = db.connection.connection_pool.make_connection()
        assert connection.retry.get_retries() == 0
    finally:
        await backend.close()
        stop_server(process)


async def test_a_write_that_reached_a_stopped_engine_is_in_doubt_and_one_to_a_dead_engine_is_not(
    tmp_path: Path,
) -> None:
    process, url = start_falkordb_server(tmp_path)
    backend = FalkorDBBackend(url, "g", 1)
    try:
        await backend.write(Statement("RETURN 1"))  # connected
        process.send_signal(signal.SIGSTOP)
        with pytest.raises(WriteInDoubt):
            await backend.write(MARK)
        with pytest.raises(BackendUnavailable) as read:
            await backend.read(COUNT)
        assert not isinstance(read.value, WriteInDoubt)
        process.send_signal(signal.SIGCONT)  # it reads what waited in its socket: the write was applied after all
        with anyio.fail_after(10):
            while (await backend.read(COUNT)) != [{"n": 1}]:
                await anyio.sleep(0.05)
        process.kill()
        process.wait()
        # The client's event loop sees the dead connection's end at its next turn; a statement sent before that
        # turn goes onto a socket whose peer is gone, and would be in doubt: the safe side of not knowing.
        await anyio.sleep(0.1)
        with pytest.raises(BackendUnavailable) as unsent:
            await backend.write(MARK)
        assert not isinstance(unsent.value, WriteInDoubt)  # no connection could be made: nothing was sent
    finally:
        await backend.close()
        stop_server(process)


async def test_the_embedded_engine_started_again_answers_a_read_but_is_never_sent_a_write_again(
    tmp_path: Path,
) -> None:
    """A write sits unread in the socket of an engine that is then killed: the gate starts a new engine and does
    not send the write to it (the old one might have applied it), so it is in doubt and absent; a read in the same
    plight is answered by the new engine."""
    backend = await start(tmp_path, "always")
    try:
        await backend.write(Statement("CREATE (:Before)"))
        for statement, read_only in ((MARK, False), (COUNT, True)):
            pid = backend.engine.pid
            assert pid is not None
            os.kill(pid, signal.SIGSTOP)
            outcome: list[object] = []

            async def send(statement: Statement = statement, read_only: bool = read_only, out: list = outcome) -> None:
                try:
                    out.append(await (backend.read if read_only else backend.write)(statement))
                except BackendUnavailable as exc:
                    out.append(exc)

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(send)
                await anyio.sleep(0.3)  # on the wire, unread
                os.kill(pid, signal.SIGKILL)
            wait_gone(pid)
            if read_only:
                assert outcome == [[{"n": 0}]]
            else:
                assert isinstance(outcome[0], WriteInDoubt)
                # Answered without waiting for the new engine; the next statement waits for it.
                assert await backend.read(COUNT) == [{"n": 0}]
            assert backend.engine.pid != pid  # the gate started the engine again
        assert await backend.read(COUNT) == [{"n": 0}]  # never sent to the new engine
        assert await backend.read(Statement("MATCH (b:Before) RETURN count(b) AS n")) == [{"n": 1}]
    finally:
        await backend.close()

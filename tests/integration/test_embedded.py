"""The embedded engine's lifecycle on a real redis-server + FalkorDB: the engine lock lives exactly as long as
the engine, gates share one engine, the last one out stops it, and a dead engine is started again once."""

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import anyio
import psutil
import pytest
import redis

from write_gate.core.cypher.statement import Statement
from write_gate.engines import engine_process
from write_gate.engines.base import BackendUnavailable, WriteInDoubt
from write_gate.engines.data_folder import DataFolderError, open_data_folder
from write_gate.engines.embedded import EmbeddedBackend, EmbeddedEngine
from write_gate.engines.engine_binaries import engine_binaries
from write_gate.engines.engine_process import spawn
from write_gate.engines.falkordb import FalkorDBBackend
from write_gate.engines.folder_locks import is_locked, try_lock

pytestmark = pytest.mark.anyio


async def start(folder: Path, fsync: str = "always", start_timeout: float = 60.0) -> EmbeddedBackend:
    return await EmbeddedBackend.start(folder, fsync, "g", 10, start_timeout)


def engines_on(folder: Path) -> list[psutil.Process]:
    """redis-server processes working in this folder, not counting an append-only rewrite child."""
    found = []
    for process in psutil.process_iter(["name", "cwd", "status"]):
        if process.info["name"] != "redis-server" or process.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        if process.info["cwd"] == str(folder.resolve()):
            try:
                parent = process.parent()
                if parent is None or parent.name() != "redis-server":
                    found.append(process)
            except psutil.NoSuchProcess:  # it (or its parent) died since the listing: a storm kills engines
                continue
    return found


def listening(path: Path) -> bool:
    """Whether a server listens on the unix socket `path` (a connection is taken)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


def wait_gone(pid: int) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return
        except psutil.NoSuchProcess:
            return
        time.sleep(0.02)
    raise AssertionError(f"process {pid} still runs")


async def test_the_engine_holds_the_lock_and_a_sigkill_releases_it(tmp_path: Path) -> None:
    backend = await start(tmp_path)
    pid = backend.engine.pid
    held = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
    assert str(tmp_path / "engine.lock") in held  # inherited by the engine: the gate dropped its own copy
    assert is_locked(tmp_path / "engine.lock")

    os.kill(pid, signal.SIGKILL)
    with anyio.fail_after(10):
        while is_locked(tmp_path / "engine.lock"):
            await anyio.sleep(0.01)
    # This process started the engine and has not reaped it: a zombie, and zombies hold no lock.
    assert psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    await FalkorDBBackend.close(backend)  # the gate goes without its shutdown, as if killed too
    backend.engine._release_gate_lock()  # noqa: SLF001


async def test_writes_survive_a_sigkill_of_the_engine(tmp_path: Path) -> None:
    backend = await start(tmp_path)
    for i in range(200):
        await backend.write(Statement("CREATE (:W {i: $i})", {"i": i}))
    os.kill(backend.engine.pid, signal.SIGKILL)
    wait_gone(backend.engine.pid)
    await FalkorDBBackend.close(backend)
    backend.engine._release_gate_lock()  # noqa: SLF001

    again = await start(tmp_path)
    try:
        assert await again.read(Statement("MATCH (n:W) RETURN count(n) AS c")) == [{"c": 200}]
    finally:
        await again.close()


async def test_two_gates_on_one_folder_share_one_engine(tmp_path: Path) -> None:
    folder = tmp_path / "my data"  # a space in the path, as in many home folders
    first, second = await start(folder), await start(folder)
    try:
        assert first.engine.pid == second.engine.pid
        assert [p.pid for p in engines_on(folder)] == [first.engine.pid]
        await first.write(Statement("CREATE (:S {by: 'first'})"))
        await second.write(Statement("CREATE (:S {by: 'second'})"))
        rows = await first.read(Statement("MATCH (n:S) RETURN n.by AS by ORDER BY by"))
        assert [r["by"] for r in rows] == ["first", "second"]
        await second.close()
        assert await first.read(Statement("MATCH (n:S) RETURN count(n) AS c")) == [{"c": 2}]  # still running
    finally:
        await first.close()


async def test_the_last_one_out_stops_the_engine_and_frees_the_folder(tmp_path: Path) -> None:
    backend = await start(tmp_path)
    pid = backend.engine.pid
    await backend.close()
    wait_gone(pid)
    assert not is_locked(tmp_path / "engine.lock") and not is_locked(tmp_path / "gates.lock")
    assert engines_on(tmp_path) == []


def test_a_start_waits_while_another_holds_the_lock_and_joins_its_engine(tmp_path: Path) -> None:
    """Whoever holds no lock starts nothing: it waits until the holder's engine serves, then joins it."""
    folder = open_data_folder(tmp_path)
    lock = try_lock(folder.engine_lock)  # as a gate does that is about to start the engine
    assert lock is not None
    joiner = EmbeddedEngine(tmp_path, "everysec", start_timeout=30)
    outcome: list[object] = []
    thread = threading.Thread(target=lambda: outcome.append(joiner.join()))
    thread.start()
    time.sleep(1.0)
    assert thread.is_alive() and engines_on(tmp_path) == []  # waiting, not starting one of its own

    engine = spawn(folder, folder.socket_path, engine_binaries(), "everysec", lock)
    os.close(lock)
    thread.join(30)
    try:
        assert outcome == [folder.socket_path] and joiner.pid == engine.pid
        assert [p.pid for p in engines_on(tmp_path)] == [engine.pid]
    finally:
        joiner.leave()  # the last one out: stops the engine it did not start
    assert engine.wait(10) == 0


def test_the_wait_is_bounded_with_a_one_line_error(tmp_path: Path) -> None:
    folder = open_data_folder(tmp_path)
    lock = try_lock(folder.engine_lock)
    assert lock is not None
    try:
        started = time.monotonic()
        with pytest.raises(DataFolderError) as refused:
            EmbeddedEngine(tmp_path, "everysec", start_timeout=1).join()
        assert 1 <= time.monotonic() - started < 10
        message = str(refused.value)
        assert "\n" not in message and str(folder.root) in message and "did not answer within 1 s" in message
        assert engines_on(tmp_path) == []
        assert not is_locked(folder.gates_lock)  # the refused gate let go of its share
    finally:
        os.close(lock)


async def test_a_dead_engine_is_started_again_once_for_all_its_gates(tmp_path: Path) -> None:
    """Every gate's next call at the same moment, two reads and two writes: one engine is started for all. A read
    is answered by it; a write lands if its gate found the new engine already there, else it is not sent again
    and answers BACKEND_UNAVAILABLE, not in doubt (it never reached the dead engine); either way, the next lands."""
    gates = [await start(tmp_path, "everysec") for _ in range(4)]
    try:
        await gates[0].write(Statement("CREATE (:K {i: 0})"))
        old = gates[0].engine.pid
        os.kill(old, signal.SIGKILL)
        wait_gone(old)
        read: list[list[dict[str, object]]] = []
        written: list[int] = []
        refused: list[BackendUnavailable] = []

        async def first_call(i: int, gate: EmbeddedBackend) -> None:
            if i % 2:
                read.append(await gate.read(Statement("MATCH (n:K) WHERE n.i = 0 RETURN count(n) AS n")))
                return
            try:
                await gate.write(Statement("CREATE (:K {i: $i})", {"i": -i}))
                written.append(-i)
            except BackendUnavailable as exc:
                refused.append(exc)

        async with anyio.create_task_group() as tasks:
            for i, gate in enumerate(gates, start=1):
                tasks.start_soon(first_call, i, gate)
        (engine,) = engines_on(tmp_path)
        assert engine.pid != old
        assert read == [[{"n": 1}]] * 2
        assert len(written) + len(refused) == 2 and not any(isinstance(r, WriteInDoubt) for r in refused)
        for i, gate in enumerate(gates, start=1):
            await gate.write(Statement("CREATE (:K {i: $i})", {"i": i}))
        rows = await gates[1].read(Statement("MATCH (n:K) RETURN n.i AS i ORDER BY i"))
        assert [r["i"] for r in rows] == sorted([*written, 0, 1, 2, 3, 4])
    finally:
        for gate in gates:
            await gate.close()
    assert engines_on(tmp_path) == []


async def test_the_engine_survives_a_signal_to_the_gates_process_group(tmp_path: Path) -> None:
    backend = await start(tmp_path)
    try:
        pid = backend.engine.pid
        assert os.getsid(pid) == pid != os.getsid(0)  # its own session: Ctrl-C in a client does not reach it
    finally:
        await backend.close()


async def test_an_engine_killed_while_it_rewrites_its_append_only_file_comes_back_whole(tmp_path: Path) -> None:
    """The rewrite child redis forks inherits the engine lock, so no new engine starts until it is gone too
    (it exits as soon as its parent dies); the restarted engine loads every write, and the child's temporary
    file is cleared away."""
    backend = await start(tmp_path, "everysec")
    try:
        await backend.write(Statement("UNWIND range(1, 100000) AS i CREATE (:R {i: i})"))
        for i in range(20):
            await backend.write(Statement("CREATE (:T {i: $i})", {"i": i}))
        client = redis.Redis(unix_socket_path=str(backend.engine.socket_path))
        client.bgrewriteaof()
        client.close()
        old = backend.engine.pid
        os.kill(old, signal.SIGKILL)
        rows = await backend.read(Statement("MATCH (n) RETURN labels(n)[0] AS label, count(n) AS c ORDER BY label"))
        assert rows == [{"label": "R", "c": 100000}, {"label": "T", "c": 20}]
        (engine,) = engines_on(tmp_path)
        assert engine.pid == backend.engine.pid != old
        assert list(tmp_path.glob("temp-*")) == []
    finally:
        await backend.close()


async def test_a_folder_removed_under_a_running_gate_answers_unavailable_not_a_crash(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    backend = await start(folder, "everysec")
    try:
        shutil.rmtree(folder)
        os.kill(backend.engine.pid, signal.SIGKILL)
        wait_gone(backend.engine.pid)
        with pytest.raises(BackendUnavailable):
            await backend.write(Statement("CREATE (:Gone)"))
    finally:
        await backend.close()


def test_the_last_one_out_stops_an_engine_that_does_not_answer(tmp_path: Path) -> None:
    """A stopped (hung) engine cannot say its pid: the lock file's record of it is used instead."""
    engine = EmbeddedEngine(tmp_path, "everysec")
    engine.join()
    pid = engine.pid
    os.kill(pid, signal.SIGSTOP)
    resume = threading.Timer(3.0, os.kill, (pid, signal.SIGCONT))  # then the pending SIGTERM takes effect
    resume.start()
    try:
        engine.leave()
        wait_gone(pid)
        assert not is_locked(tmp_path / "engine.lock")
    finally:
        resume.join()


async def test_an_engine_that_wedges_while_it_starts_is_killed_and_started_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FalkorDB once deadlocked loading a 7 KB append-only file (CI: its main thread waiting for the graphs'
    global lock): it listened and answered nothing, and the gate that started it gave up after its start timeout.
    Stood in for by an engine stopped as soon as it listens: the gate kills it after a third of its start timeout
    and starts it again from its files, with the write they hold."""
    backend = await start(tmp_path)
    await backend.write(Statement("CREATE (:D {i: 1})"))
    first, old_socket = psutil.Process(backend.engine.pid), backend.engine.socket_path
    assert old_socket is not None
    await backend.close()
    # The first engine gone, and its socket with it, before the next starts: the stand-in below stops the new
    # engine once its socket appears, and an old socket still there would stop it before it listens (a CI run saw
    # that: an engine that never listened reads as one still loading, not as a wedged one).
    first.wait(timeout=30)
    deadline = time.monotonic() + 30
    while old_socket.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    stopped: list[int] = []

    def spawn_then_stop(folder, socket_path, *args):  # type: ignore[no-untyped-def]
        process = spawn(folder, socket_path, *args)
        if not stopped:
            # Stopped once it listens: a connection is taken (a socket file alone is not enough; a CI run stopped
            # one before it listened, which reads as still loading, not as wedged).
            deadline = time.monotonic() + 30
            while not listening(socket_path) and time.monotonic() < deadline:
                time.sleep(0.002)
            os.kill(process.pid, signal.SIGSTOP)
            stopped.append(process.pid)
        return process

    monkeypatch.setattr(engine_process, "spawn", spawn_then_stop)
    began = time.monotonic()
    # 24 s: a third (8 s) to find it wedged, and the rest for the engine started again, which a loaded CI run
    # (the whole suite on two cores) once took past a 15 s timeout's 10.
    backend = await start(tmp_path, start_timeout=24)
    try:
        assert (await backend.read(Statement("MATCH (n:D) RETURN count(n) AS c")))[0]["c"] == 1
        assert backend.engine.pid != stopped[0] and not psutil.pid_exists(stopped[0])
        assert 8 <= time.monotonic() - began < 24  # killed after a third of the start timeout, not at its end
    finally:
        await backend.close()


def test_a_silent_engine_counts_as_wedged_only_while_it_uses_no_cpu() -> None:
    """Silence tells a deadlock (no answer, no CPU) from a long load of one large graph (no answer for a while,
    a core busy): stood in for by a process that sleeps and one that spins."""
    # Not Python: the suite's subprocesses start coverage first, whose imports use a second of CPU.
    sleeping = subprocess.Popen(["sleep", "60"])
    spinning = subprocess.Popen(["yes"], stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.1)  # both started
        silences = {process.pid: engine_process.Silence(2.0) for process in (sleeping, spinning)}
        start = time.monotonic()
        for pid, silence in silences.items():
            assert not silence.wedged(engine_process.State.SILENT, pid, start)
        time.sleep(2.1)  # a spinning process gets a tenth of a core even on a loaded machine
        now = time.monotonic()
        assert silences[sleeping.pid].wedged(engine_process.State.SILENT, sleeping.pid, now)
        assert not silences[spinning.pid].wedged(engine_process.State.SILENT, spinning.pid, now)
        # An answer (or "loading") ends a silence: it is counted from the start again.
        assert not silences[sleeping.pid].wedged(engine_process.State.BUSY, sleeping.pid, now)
        assert not silences[sleeping.pid].wedged(engine_process.State.SILENT, sleeping.pid, now + 5)
    finally:
        for process in (sleeping, spinning):
            process.kill()
            process.wait()


async def test_an_engine_that_wedges_on_an_index_statement_is_started_again_and_the_statement_sent_again(
    tmp_path: Path,
) -> None:
    """FalkorDB 4.16 deadlocked on a graph's first statement, a CREATE INDEX (gdb: its main thread waiting for the
    lock on its graph list, which no thread held), and never answered: the gate sent the statement once more to the
    same engine, its migrations failed, and every write was refused. Stood in for by an engine stopped after a
    write: the index statement gets no answer, the gate finds the engine silent and idle, kills it, starts it
    again from its files and sends the statement once more."""
    backend = await EmbeddedBackend.start(tmp_path, "always", "g", 2, start_timeout=9)
    try:
        await backend.write(Statement("CREATE (:D {i: 1})"))
        wedged = backend.engine.pid
        os.kill(wedged, signal.SIGSTOP)
        try:
            await backend.ensure_index("D", "i")
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(wedged, signal.SIGCONT)
        assert backend.engine.pid != wedged
        wait_gone(wedged)
        assert await backend.read(Statement("MATCH (n:D) RETURN n.i AS i")) == [{"i": 1}]
        indexes = await backend.read(Statement("CALL db.indexes() YIELD label, properties RETURN label, properties"))
        assert any(row["label"] == "D" and "i" in row["properties"] for row in indexes), indexes
    finally:
        await backend.close()


async def test_a_slow_write_is_logged_as_its_query_and_read_back_whole_after_a_restart(tmp_path: Path) -> None:
    """FalkorDB logs a write whose time per change passes its effects threshold as effects, which name properties
    by the ids the engine gave their names when it ran; replayed after a restart where the names got other ids,
    the values came back under other names (CI, test_faults: a node's claim list as `_f__label`). The engine logs
    every write as its query: one that works long for one node with new property names too, and it reads back
    whole."""
    backend = await start(tmp_path)
    names = ", ".join(f"p{k}: total + {k}" for k in range(12))  # twelve property names the graph has never had
    slow = f"UNWIND range(1, 300000) AS x WITH sum(x) AS total CREATE (:S {{total: total, {names}}})"
    await backend.write(Statement(slow))
    await backend.close()
    aof = b"".join(path.read_bytes() for path in (tmp_path / "appendonlydir").glob("*.incr.aof"))
    assert b"GRAPH.EFFECT" not in aof and b"GRAPH.QUERY" in aof
    again = await start(tmp_path)
    try:
        rows = await again.read(Statement("MATCH (n:S) RETURN n.total AS total, n.p0 AS p0, n.p11 AS p11"))
        total = 300000 * 300001 // 2
        assert rows == [{"total": total, "p0": total, "p11": total + 11}]
    finally:
        await again.close()

"""The zero-setup engine: FalkorDB in a redis-server beside the gate, one per data folder, by construction.

- The engine lock (`engine.lock`, an OS lock) is taken by a gate, inherited by the engine process it starts,
  and dropped by the gate: it lives exactly as long as the engine. Only whoever holds it may start an
  engine, so two engines never run on one folder, whatever the timing or the kill.
- Every gate holds `gates.lock` shared while it uses the engine; the last one out gets it exclusively and
  shuts the engine down gracefully, while any gate arriving meanwhile waits.
- A gate joins an engine only after it has checked that the engine serves this very folder.
- A folder that held a graph and lost its append-only files, or their acknowledged tail, is refused at start,
  never opened empty or short. Every gate keeps the record of acknowledged sizes that this check reads.
"""

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

from write_gate import __version__
from write_gate.core.cypher.statement import Statement
from write_gate.engines import engine_process
from write_gate.engines.acknowledged import Recorder, drop_torn_tail
from write_gate.engines.base import BackendUnavailable, Row
from write_gate.engines.data_folder import (
    DataFolder,
    DataFolderError,
    check_whole,
    legacy_engine,
    mark_initialised,
    open_data_folder,
    remove_leftovers,
)
from write_gate.engines.engine_binaries import engine_binaries
from write_gate.engines.engine_process import State
from write_gate.engines.falkordb import FalkorDBBackend
from write_gate.engines.folder_locks import is_locked, read_holder, record_holder, try_lock, wait_lock

logger = logging.getLogger(__name__)

# How long the last gate out waits for the engine to finish its graceful shutdown.
SHUTDOWN_SECONDS = 30.0
# How often a gate records the append-only files' sizes (when they moved): under `appendfsync everysec`, the
# writes acknowledged since the last record are the ones a clean cut of the file could take unnoticed.
RECORD_SECONDS = 1.0
# An engine that listens but answers nothing, not even "loading", and uses no CPU (engine_process.Silence: a long
# load keeps a core busy) for this share of the start timeout is wedged:
# FalkorDB can deadlock its main thread against a query's graph lock (FalkorDB#2129; seen in this suite's CI), or
# while it loads its append-only file (its main thread waiting for the graphs' global lock, which nothing holds
# any more: seen in this suite's CI, a 7 KB file), and nothing but a kill ends that. The kill loses no
# acknowledged write: each is in the append-only file before the engine answers it (under the default, no, and
# always; under everysec, but for what redis held back behind a slow fsync, up to 2 s), and the file outlives the
# process.
WEDGED_SHARE = 1 / 3


def check_data_folder(data_dir: Path) -> None:
    """What can be refused before any engine starts: a folder that cannot be used, or (while no engine runs
    on it) one that lost its append-only files. For commands to fail early in one line."""
    folder = open_data_folder(data_dir)
    if not is_locked(folder.engine_lock):
        check_whole(folder)


class EmbeddedEngine:
    """One data folder's engine as one gate sees it: join it (starting it if none runs), leave it.
    Blocking: call these from a worker thread."""

    def __init__(self, data_dir: Path, fsync: str, start_timeout: float = 60.0) -> None:
        self.data_dir = data_dir
        self._fsync = fsync
        self._start_timeout = start_timeout
        self.folder: DataFolder | None = None
        self.socket_path: Path | None = None
        self.pid: int | None = None
        self._gate_lock: int | None = None
        self._recorder: Recorder | None = None
        self._started: list[subprocess.Popen[bytes]] = []  # engines this process started, reaped when they end

    def join(self) -> Path:
        """Use the folder's engine; return its socket path."""
        folder = self.folder = open_data_folder(self.data_dir)
        self.socket_path = folder.socket_path
        deadline = time.monotonic() + self._start_timeout
        self._gate_lock = wait_lock(folder.gates_lock, deadline, shared=True)
        if self._gate_lock is None:
            raise DataFolderError(
                f"the embedded engine for {folder.root} was still shutting down after {self._start_timeout:g} s; "
                "try again"
            )
        try:
            self.ensure_running()
        except BaseException:
            self._release_gate_lock()
            raise
        self._recorder = Recorder(folder, RECORD_SECONDS)
        self._recorder.record()
        self._recorder.start()
        return self.socket_path

    def ensure_running(self) -> int:
        """The pid of the engine serving this folder: the running one, or one this gate starts because it
        holds the engine lock. Waits (bounded) while another process starts or loads it."""
        assert self.folder is not None and self.socket_path is not None, "join() first"
        folder, socket_path = self.folder, self.socket_path
        self._reap()
        deadline = time.monotonic() + self._start_timeout
        warned = False
        silence = engine_process.Silence(self._start_timeout * WEDGED_SHARE)
        while True:
            found = engine_process.probe(socket_path, folder)
            if found.state is State.SERVING:
                assert found.pid is not None  # a serving engine's probe names its process
                self.pid = found.pid
                return found.pid
            lock = try_lock(folder.engine_lock)
            if lock is not None:
                try:
                    self.pid = self._start(lock, deadline)
                except engine_process.EngineWedged as exc:
                    logger.error("%s; starting it again from its files", exc)
                    continue
                return self.pid
            if found.state is State.FOREIGN and not warned:
                logger.warning(
                    "the engine on %s serves %s, not %s: not joining it", socket_path, found.serves, folder.root
                )
                warned = True
            holder = read_holder(folder.engine_lock) if found.state is State.SILENT else None
            if silence.wedged(found.state, holder, time.monotonic()):
                self._kill_wedged(folder, silence.seconds)
                silence = engine_process.Silence(silence.limit)
            if time.monotonic() >= deadline:
                holder = read_holder(folder.engine_lock)
                raise DataFolderError(
                    f"the embedded engine for {folder.root} (process {holder or 'unknown'}) holds the folder but did "
                    f"not answer within {self._start_timeout:g} s (engine log: {folder.log_file})"
                )
            time.sleep(0.02)

    def _kill_wedged(self, folder: DataFolder, silent_for: float) -> None:
        """SIGKILL the engine holding this folder, which has answered nothing for `silent_for` seconds: the
        holder the engine lock names, only if it is still the engine serving this folder (its working
        directory), so a reused process id is never hit."""
        holder = read_holder(folder.engine_lock)
        if holder is None or not is_locked(folder.engine_lock) or not _works_in(holder, folder.root):
            return
        logger.error(
            "the embedded engine (process %s) for %s has answered nothing for %.0f s while not loading: it is "
            "wedged; killing it to start it again from its files (engine log: %s)",
            holder,
            folder.root,
            silent_for,
            folder.log_file,
        )
        with contextlib.suppress(ProcessLookupError):
            os.kill(holder, signal.SIGKILL)

    def _start(self, lock: int, deadline: float) -> int:
        """Holding the engine lock, no engine serves this folder: check the folder, start the engine with the
        lock, and let go of this process's copy of it."""
        folder = self.folder
        assert folder is not None and self.socket_path is not None
        try:
            check_whole(folder)
            drop_torn_tail(folder)
            if (legacy := legacy_engine(folder)) is not None:
                raise DataFolderError(
                    f"an engine started by an earlier write-gate (process {legacy}) still runs on {folder.root}: "
                    "stop the gates that use it (or that process), then start again"
                )
            remove_leftovers(folder)
            offset = engine_process.log_size(folder)
            process = engine_process.spawn(folder, self.socket_path, engine_binaries(), self._fsync, lock)
            record_holder(lock, process.pid)
        finally:
            os.close(lock)
        self._started.append(process)
        logger.info("started the embedded engine (process %s) on %s", process.pid, folder.root)
        wedged_after = self._start_timeout * WEDGED_SHARE
        pid = engine_process.wait_serving(process, folder, self.socket_path, offset, deadline, wedged_after)
        try:
            mark_initialised(folder, __version__)
        except OSError as exc:  # the engine serves; only the protection of a later start is missing
            logger.warning("could not mark %s as holding a graph: %s", folder.root, exc)
        return pid

    def leave(self) -> None:
        """Stop using the engine; the last gate out shuts it down (SIGTERM: redis' graceful shutdown, which
        flushes the append-only file) and waits until it is gone."""
        folder, socket_path = self.folder, self.socket_path  # join() sets both
        if folder is None or socket_path is None or self._gate_lock is None:
            return
        if self._recorder is not None:
            # Everything this gate was told is written is in the files by now (the engine writes its
            # append-only file before it answers, or within 2 s under everysec; its graceful shutdown flushes
            # the rest): record it while the gate still holds the folder.
            self._recorder.stop()
            self._recorder.record()
            self._recorder = None
        self._release_gate_lock()
        try:
            last = try_lock(folder.gates_lock)
        except OSError:
            return  # the folder itself is gone: nothing left to shut down in it
        if last is None:
            return  # other gates still use it
        try:
            found = engine_process.probe(socket_path, folder)
            pid = found.pid if found.state in (State.SERVING, State.BUSY) else None
            if is_locked(folder.engine_lock) and (pid := pid or read_holder(folder.engine_lock)):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)
            # Gone means the engine lock is free: the kernel releases it when the engine (or a zombie) ends.
            freed = wait_lock(folder.engine_lock, time.monotonic() + SHUTDOWN_SECONDS)
            if freed is None and pid and _works_in(pid, folder.root):
                # A wedged engine never gets to its shutdown; its files hold every write it answered.
                logger.warning(
                    "the embedded engine for %s did not stop within %g s: killed", folder.root, SHUTDOWN_SECONDS
                )
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                freed = wait_lock(folder.engine_lock, time.monotonic() + SHUTDOWN_SECONDS)
            if freed is None:
                logger.warning("the embedded engine for %s did not stop within %g s", folder.root, SHUTDOWN_SECONDS)
            else:
                os.close(freed)
            self._reap()
        finally:
            os.close(last)

    def _release_gate_lock(self) -> None:
        if self._gate_lock is not None:
            os.close(self._gate_lock)
            self._gate_lock = None

    def _reap(self) -> None:
        self._started = [p for p in self._started if p.poll() is None]


def _works_in(pid: int, root: Path) -> bool:
    """Whether process `pid` runs in folder `root` (as the engine does: `--dir`). Where /proc is missing, the
    engine lock's record is all there is to go on."""
    try:
        return Path(os.readlink(f"/proc/{pid}/cwd")) == root.resolve()
    except FileNotFoundError:
        return not Path("/proc/self").exists()
    except OSError:
        return False


def _settled(task: "asyncio.Task[bool]") -> None:
    """A recovery begun beside a write's answer: its failure is logged, never left unretrieved."""
    if not task.cancelled() and (exc := task.exception()) is not None:
        logger.warning("the embedded engine could not be recovered: %s", exc)


class EmbeddedBackend(FalkorDBBackend):
    """The gate's engine: if it dies (a crash, a SIGKILL), the next call of any gate on the folder starts it
    again through the engine lock (exactly one engine) from its append-only file, and carries on: a read is then
    answered, a write answers BACKEND_UNAVAILABLE (see `_run`)."""

    def __init__(
        self, engine: EmbeddedEngine, graph: str, timeout_seconds: float, read_timeout_seconds: float | None = None
    ) -> None:
        assert engine.socket_path is not None, "join the engine first"
        super().__init__(f"unix://{engine.socket_path}", graph, timeout_seconds, read_timeout_seconds)
        self.engine = engine
        self._restarting = anyio.Lock()
        self._recovering: asyncio.Task[bool] | None = None  # a recovery begun after a write, held while it runs
        self._generation = 0  # how many times this gate has found a new engine behind its socket

    async def _run(self, statement: Statement, read_only: bool) -> list[Row]:
        """A read the engine could not answer is asked again of the engine that serves once this gate has found
        or started one. A write never is: it may have reached the engine that went away (which may have applied
        it), and even one that surely did not carries the stamp of when it was decided, which the change feed
        trusts to be at most its settle window old when it commits (core/change_feed.py). Its call answers
        BACKEND_UNAVAILABLE (saying whether it may have been applied), and the engine is started for the next."""
        if self._recovering is not None and not self._recovering.done():
            # An engine is being found or started again after a write met it gone: this statement waits for that
            # (shielded: a statement cancelled meanwhile leaves the recovery running).
            await asyncio.shield(self._recovering)
        generation = self._generation
        try:
            return await super()._run(statement, read_only)
        except BackendUnavailable:
            if not read_only:
                # Answered now, not once a wedged engine has been killed and started again (20 s and more): the
                # engine is recovered beside the answer, and the next statement waits for that.
                self._recovering = asyncio.get_running_loop().create_task(self._recover(generation))
                self._recovering.add_done_callback(_settled)
                raise
            if not await self._recover(generation):
                raise
            return await super()._run(statement, read_only)

    def _engine_check(self) -> Callable[[], Awaitable[None]]:
        """A statement sent to this engine got no answer: the engine is found again, and killed and started again
        from its files if it is wedged (silent and idle: `EmbeddedEngine.ensure_running`), as for a read."""
        generation = self._generation

        async def check() -> None:
            await self._recover(generation)

        return check

    async def ping(self) -> None:
        generation = self._generation
        try:
            await super().ping()
        except BackendUnavailable:
            if not await self._recover(generation):
                raise

    async def _recover(self, seen_generation: int) -> bool:
        """True when one more try is worth it: another call recovered meanwhile, or the engine was gone and a
        new one serves now (started by this gate or another). False when the same engine is still there (it
        was slow), or no engine can be had."""
        async with self._restarting:
            if self._generation != seen_generation:
                return True
            before = self.engine.pid
            try:
                pid = await anyio.to_thread.run_sync(self.engine.ensure_running)
            except (BackendUnavailable, OSError) as exc:  # OSError: the folder itself went away
                logger.warning("the embedded engine could not be had again: %s", exc)
                return False
            if pid == before:
                return False
            assert self.engine.folder is not None  # ensure_running answered: the engine has joined its folder
            logger.warning("the embedded engine was gone; process %s serves %s now", pid, self.engine.folder.root)
            await FalkorDBBackend.close(self)
            self._connect(f"unix://{self.engine.socket_path}")
            self._generation += 1
            return True

    @classmethod
    async def start(
        cls,
        data_dir: Path,
        fsync: str,
        graph: str,
        timeout_seconds: float,
        start_timeout: float = 60.0,
        read_timeout_seconds: float | None = None,
    ):
        engine = EmbeddedEngine(data_dir, fsync, start_timeout)
        await anyio.to_thread.run_sync(engine.join)
        return cls(engine, graph, timeout_seconds, read_timeout_seconds)

    async def close(self) -> None:
        if self._recovering is not None and not self._recovering.done():
            with contextlib.suppress(Exception):
                await asyncio.shield(self._recovering)  # a restart under way ends before the engine is left
        await super().close()
        await anyio.to_thread.run_sync(self.engine.leave)

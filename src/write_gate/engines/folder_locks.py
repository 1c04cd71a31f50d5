"""OS file locks (`flock`) on the data folder's lock files.

A lock belongs to the open file, not to a process: a child that inherits the descriptor holds it too, and
the kernel releases it when the last holder closes it or dies, by any signal. That is what ties the engine
lock to the engine process's life.
"""

import fcntl
import os
import time
from pathlib import Path


def try_lock(path: Path, *, shared: bool = False) -> int | None:
    """The locked descriptor (non-inheritable), or None when another holder has it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


def wait_lock(path: Path, deadline: float, *, shared: bool = False) -> int | None:
    """Poll for the lock until the monotonic deadline; None when it was not had by then."""
    while True:
        fd = try_lock(path, shared=shared)
        if fd is not None or time.monotonic() >= deadline:
            return fd
        time.sleep(0.02)


def is_locked(path: Path) -> bool:
    """Whether someone holds the lock now (checked by trying to take it exclusively, then letting go)."""
    fd = try_lock(path)
    if fd is None:
        return True
    os.close(fd)
    return False


def record_holder(fd: int, pid: int) -> None:
    """Write the holder's pid into the lock file, for messages only: the lock itself decides everything."""
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{pid}\n".encode(), 0)


def read_holder(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None

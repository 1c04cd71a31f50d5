"""`write-gate engine check`: is the data folder whole? Read-only: it never changes a file.

redis-server is also redis-check-aof when started under that name (its argv[0]), so the check uses the very
engine build that will load the files.
"""

import subprocess
from dataclasses import dataclass
from pathlib import Path

from write_gate.engines.data_folder import check_whole, open_data_folder
from write_gate.engines.engine_binaries import engine_binaries


@dataclass(frozen=True)
class FolderCheck:
    whole: bool
    summary: str  # one line
    details: str = ""  # the checker's own report


def check_folder(data_dir: Path) -> FolderCheck:
    folder = open_data_folder(data_dir)
    check_whole(folder)  # a missing file or a file cut short: refused in one line, as at start
    if not folder.manifest.is_file():
        return FolderCheck(True, f"{folder.root} holds no append-only files yet: a new folder")
    checker = subprocess.run(
        ["redis-check-aof", str(folder.manifest)],
        executable=engine_binaries().server,
        cwd=folder.root,
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = checker.stdout.strip().splitlines()
    if checker.returncode == 0:
        return FolderCheck(True, f"{folder.aof_dir}: the append-only files are whole", checker.stdout)
    reason = next((line for line in reversed(lines) if "not valid" in line), lines[-1] if lines else "no report")
    reason = reason.split(". Use the --fix option")[0]  # advice for a command name users do not have
    return FolderCheck(
        False,
        f"{folder.aof_dir}: {reason.rstrip('.')}; restore the file from a backup, or move the folder aside to start "
        "with an empty graph",
        checker.stdout,
    )

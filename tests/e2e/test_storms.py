"""Storms on one data folder, as several MCP clients each starting their own `write-gate serve` (stdio) cause
them: gates started at the same moment (on a fresh folder and on one with data), and repeated SIGKILLs of the
engine and of gates while they write. Throughout, at most one engine runs on the folder; afterwards the
folder loads, every acknowledged write is there with its value, and no key has two nodes.

Bounded here (one trial of each); the full form: `WRITE_GATE_STORM_TRIALS=50 uv run pytest -m storm`.
"""

import os
import random
import shutil
import signal
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import psutil
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import settings_env, write_gate_argv
from tests.e2e.test_data_folder_cli import one_line_error, run
from tests.integration.test_data_folder import cut_last_commands, incr_file, snapshot
from tests.integration.test_embedded import engines_on
from write_gate.core.cypher.statement import Statement
from write_gate.core.identifiers import PROTECTED_FIELDS
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import BackendKind, Settings

pytestmark = [pytest.mark.anyio, pytest.mark.storm]

TRIALS = int(os.environ.get("WRITE_GATE_STORM_TRIALS", "1"))
KEYS = [f"k{i}" for i in range(12)]  # every gate writes every key: two engines would duplicate or lose them


@dataclass
class Ledger:
    """Per (key, writer): the last value sent, and the last value acknowledged. A writer's values only grow,
    so the stored value must lie between its last acknowledged and its last sent."""

    sent: dict[tuple[str, str], int] = field(default_factory=dict)
    acknowledged: dict[tuple[str, str], int] = field(default_factory=dict)
    refused: Counter[str] = field(default_factory=Counter)
    # Keys written once, by one writer: the properties sent for each, and the keys acknowledged.
    fresh_sent: dict[str, dict[str, object]] = field(default_factory=dict)
    fresh_acknowledged: set[str] = field(default_factory=set)


class EngineWatch:
    """Samples the processes while the storm runs: the most engines seen on the folder at once."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.most = 0
        self.samples = 0

    async def run(self, stop: anyio.Event) -> None:
        while not stop.is_set():
            count = len(await anyio.to_thread.run_sync(engines_on, self.folder))
            self.most, self.samples = max(self.most, count), self.samples + 1
            await anyio.sleep(0.02)


def storm_settings(folder: Path) -> Settings:
    return Settings(backend=BackendKind.EMBEDDED, data_dir=folder, graph_name="storm", embedded_fsync="everysec")


def gate(folder: Path, writer: str) -> StdioServerParameters:
    command, *args = write_gate_argv("serve")  # with its start-up migrations, as a user runs it
    env = settings_env(storm_settings(folder)) | {"WRITE_GATE_AGENT": writer}
    return StdioServerParameters(command=command, args=args, env=env)


async def write(client: Client, ledger: Ledger, writer: str, key: str, value: int) -> bool:
    """A key every gate writes: the writer's own property on it."""
    ledger.sent[(key, writer)] = value
    if not await write_node(client, ledger, key, {writer: value}):
        return False
    ledger.acknowledged[(key, writer)] = value
    return True


async def write_fresh(client: Client, ledger: Ledger, writer: str, value: int) -> bool:
    """A key no other write names: the node it creates must hold exactly these properties, or none."""
    key = f"{writer}-{value}"
    ledger.fresh_sent[key] = {"name": key, "writer": writer, "value": value, "written_by": writer}
    if not await write_node(client, ledger, key, {"writer": writer, "value": value}):
        return False
    ledger.fresh_acknowledged.add(key)
    return True


async def write_node(client: Client, ledger: Ledger, key: str, properties: dict[str, object]) -> bool:
    arguments = {
        "label": "Person",
        "merge_keys": {"name": key},
        "properties": properties,
        "source": "storm",
        "extraction_method": "api",
    }
    result = await client.call_tool("write_node", arguments)
    if result.is_error:
        answer = result.structured_content
        reason = (answer.get("details") or {}).get("reason")
        ledger.refused[f"{answer['error_code']} ({reason})" if reason else answer["error_code"]] += 1
        return False
    return True


async def check_folder(folder: Path, ledger: Ledger) -> dict[str, dict[str, object]]:
    """Once every gate is gone: the engine stopped, the folder loads, every acknowledged write is there."""
    with anyio.fail_after(30):
        while engines_on(folder):
            await anyio.sleep(0.05)
    backend = await open_backend(storm_settings(folder))
    try:
        rows = await backend.read(Statement("MATCH (n:Person) RETURN n.name AS name, properties(n) AS p"))
    finally:
        await backend.close()
    nodes = Counter(row["name"] for row in rows)
    assert [key for key, count in nodes.items() if count > 1] == []  # no key has two nodes
    stored = {row["name"]: row["p"] for row in rows}
    wrong = {
        (key, writer): (acknowledged, stored.get(key, {}).get(writer), ledger.sent[(key, writer)])
        for (key, writer), acknowledged in ledger.acknowledged.items()
        if not acknowledged <= stored.get(key, {}).get(writer, -1) <= ledger.sent[(key, writer)]
    }
    assert wrong == {}, f"acknowledged writes lost or stale (acknowledged, stored, last sent): {wrong}"
    kept = PROTECTED_FIELDS - {"written_by"}  # the gate's own stamps, but who wrote it
    written = {
        name: {k: v for k, v in p.items() if k not in kept and not k.startswith("_")} for name, p in stored.items()
    }
    assert ledger.fresh_acknowledged <= set(stored), "acknowledged new keys lost"
    foreign = {key: written[key] for key, sent in ledger.fresh_sent.items() if key in written and written[key] != sent}
    assert foreign == {}, f"new keys holding properties not written for them: {foreign}"
    # Refused only because the engine was down: a write that met it dead (never sent twice: it may have applied
    # it), or a gate started while it was (its registry not loaded).
    unreachable = {"BACKEND_UNAVAILABLE (unreachable)", "SCHEMA_SOURCE_UNAVAILABLE (engine unreachable)"}
    assert set(ledger.refused) <= unreachable, ledger.refused
    return written


async def simultaneous_start(
    folder: Path, gates: int, rounds: int, ledger: Ledger, first_value: int, prefix: str = "g"
) -> None:
    """`gates` stdio gates spawned at the same moment, each then writing every key `rounds` times."""
    watch, stop = EngineWatch(folder), anyio.Event()

    async def writer(number: int) -> None:
        name = f"{prefix}{number}"
        async with Client(gate(folder, name), read_timeout_seconds=60) as client:
            for value in range(first_value, first_value + rounds):
                for key in random.sample(KEYS, len(KEYS)):
                    await write(client, ledger, name, key, value)

    with anyio.fail_after(240):
        async with anyio.create_task_group() as outer:
            outer.start_soon(watch.run, stop)
            async with anyio.create_task_group() as writers:
                for number in range(gates):
                    writers.start_soon(writer, number)
            stop.set()
    assert watch.samples > 0 and watch.most == 1


@pytest.mark.parametrize("trial", range(TRIALS))
async def test_gates_started_at_the_same_moment_on_a_fresh_folder_and_on_one_with_data(
    tmp_path: Path, trial: int
) -> None:
    ledger = Ledger()
    await simultaneous_start(tmp_path, gates=4, rounds=2, ledger=ledger, first_value=0)
    assert len(ledger.acknowledged) == 4 * len(KEYS)
    await check_folder(tmp_path, ledger)
    # Again, on the folder that now holds data (its engine starts from the append-only files).
    await simultaneous_start(tmp_path, gates=4, rounds=2, ledger=ledger, first_value=10)
    await check_folder(tmp_path, ledger)


def gate_processes() -> list[psutil.Process]:
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if child.name() != "redis-server" and child.environ().get("WRITE_GATE_AGENT", "").startswith("w"):
                found.append(child)
        except psutil.Error:
            continue
    return found


@pytest.mark.parametrize("trial", range(TRIALS))
async def test_repeated_sigkills_of_the_engine_and_of_gates_while_they_write(tmp_path: Path, trial: int) -> None:
    """Writers keep creating new keys (named by writer and sequence) while the engine and gates are killed:
    every acknowledged one is there holding exactly what was written for it, and no key holds another's."""
    ledger, watch, stop, storm_over = Ledger(), EngineWatch(tmp_path), anyio.Event(), anyio.Event()
    after_last_kill: Counter[int] = Counter()
    new_keys_under_kills = 0  # acknowledged between the first kill and the last
    kills: Counter[str] = Counter()
    writing, acknowledged_by = anyio.Event(), set()  # set once every writer has had a write acknowledged

    async def writer(slot: int) -> None:
        """One client; when its gate is killed, it starts another gate (a new writer name) and goes on."""
        nonlocal new_keys_under_kills
        generation, value = 0, 0
        while not storm_over.is_set():
            name = f"w{slot}_{generation}"
            try:
                async with Client(gate(tmp_path, name), read_timeout_seconds=60) as client:
                    while not storm_over.is_set():
                        value += 1
                        # Mostly new keys, as in the failure seen (new-key writes under kills); some shared ones.
                        if fresh := value % 4 != 0:
                            acknowledged = await write_fresh(client, ledger, name, value)
                        else:
                            acknowledged = await write(client, ledger, name, KEYS[value % len(KEYS)], value)
                        if acknowledged and not writing.is_set():
                            acknowledged_by.add(slot)
                            if len(acknowledged_by) == 3:
                                writing.set()
                        if acknowledged and fresh and kills.total() and not stop.is_set():
                            new_keys_under_kills += 1
                        if acknowledged and stop.is_set():
                            after_last_kill[slot] += 1
            except Exception:  # noqa: BLE001 - its gate was killed under it: the call is not acknowledged
                generation += 1

    async def killer() -> None:
        with anyio.fail_after(120):  # the gates are up and writing: each writer has a write acknowledged
            await writing.wait()
        for round_ in range(6):
            if round_ % 2 == 0:
                with anyio.fail_after(30):  # the gates start it again at their next call
                    while not (engines := await anyio.to_thread.run_sync(engines_on, tmp_path)):
                        await anyio.sleep(0.05)
                for engine in engines:
                    os.kill(engine.pid, signal.SIGKILL)
                    kills["engine"] += 1
            elif gates := await anyio.to_thread.run_sync(gate_processes):
                os.kill(random.choice(gates).pid, signal.SIGKILL)
                kills["gate"] += 1
            await anyio.sleep(random.uniform(0.5, 1.5))
        stop.set()  # no more kills: every writer must get writes through again
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and min(after_last_kill[slot] for slot in range(3)) < 5:
            await anyio.sleep(0.1)
        storm_over.set()

    with anyio.fail_after(300):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(watch.run, storm_over)
            tasks.start_soon(killer)
            for slot in range(3):
                tasks.start_soon(writer, slot)
    assert kills["engine"] == 3 and kills["gate"] >= 1
    assert new_keys_under_kills >= 10  # the kills hit writes of new keys
    assert watch.most == 1  # never two engines on the folder
    assert min(after_last_kill[slot] for slot in range(3)) >= 5  # every writer recovered by itself
    await check_folder(tmp_path, ledger)


@pytest.mark.parametrize("trial", range(TRIALS))
async def test_a_folder_copied_while_its_gates_write_and_damaged_copies(tmp_path: Path, trial: int) -> None:
    """A folder copied while a gate on it runs (engine, socket, locks and record copied too): gates on the copy
    and on the original write at once, every acknowledged write is in its own folder and neither folder holds
    the other's. Then copies of the original, each damaged one way (whole acknowledged writes cut off the end,
    the append-only directory and the marker gone, garbage inside), are refused by `write-gate serve` in one
    line naming the file, and left unchanged."""
    original, copy = tmp_path / "original", tmp_path / "copy"
    ledger = Ledger()
    await simultaneous_start(original, gates=2, rounds=1, ledger=ledger, first_value=0)
    async with Client(gate(original, "keeper"), read_timeout_seconds=60) as keeper:
        assert await write_fresh(keeper, ledger, "keeper", 0)
        await anyio.to_thread.run_sync(lambda: subprocess.run(["cp", "-a", str(original), str(copy)], check=True))
        on_copy = copy_ledger(ledger)

        async def keep_writing() -> None:
            for value in range(1, 21):
                await write_fresh(keeper, ledger, "keeper", value)

        with anyio.fail_after(240):
            async with anyio.create_task_group() as both:
                both.start_soon(keep_writing)
                both.start_soon(simultaneous_start, copy, 2, 1, on_copy, 10, "c")
    assert len(ledger.fresh_acknowledged) == 21 and len(on_copy.acknowledged) == len(ledger.acknowledged) + 2 * 12

    in_original, in_copy = await check_folder(original, ledger), await check_folder(copy, on_copy)
    assert not any(writer.startswith("c") for node in in_original.values() for writer in node)  # no copy's writes
    assert set(in_copy) & (ledger.fresh_acknowledged - on_copy.fresh_acknowledged) == set()  # nor the reverse

    async def refused(damage: str, expected: str) -> None:
        damaged = tmp_path / f"damaged-{damage}"
        shutil.copytree(original, damaged)
        incr = incr_file(damaged)
        expected = expected.format(folder=damaged, incr=incr, cut=damage_folder(damage, damaged, incr))
        before = snapshot(damaged)
        error = one_line_error(await anyio.to_thread.run_sync(run, damaged, ["serve"]))
        assert expected in error, (damage, error)
        assert snapshot(damaged) == before and engines_on(damaged) == [], damage  # never opened, not even empty

    async with anyio.create_task_group() as serves:  # one `serve` each, at once: they start slowly
        for damage, expected in DAMAGES.items():
            serves.start_soon(refused, damage, expected)


def copy_ledger(ledger: Ledger) -> Ledger:
    return Ledger(
        dict(ledger.sent), dict(ledger.acknowledged), Counter(), dict(ledger.fresh_sent), set(ledger.fresh_acknowledged)
    )


# Ways of damaging a stopped folder (the others are refused the same way in tests/e2e/test_data_folder_cli.py
# and tests/integration/test_data_folder.py), and what the refusal must say.
DAMAGES = {
    "cut": "the append-only file {incr} is {cut} bytes shorter than when its writes were acknowledged",
    "no append-only directory, no marker": "{folder}/appendonlydir is missing",
    "garbage": "the embedded engine refused to load {incr}: Bad file format",
}


def damage_folder(damage: str, folder: Path, incr: Path) -> int:
    """Damage the folder; the bytes cut off, for a cut."""
    if damage == "cut":
        return cut_last_commands(incr, 3)  # three acknowledged writes, whole commands
    if damage == "no append-only directory, no marker":
        shutil.rmtree(folder / "appendonlydir")
        (folder / "write-gate-folder.json").unlink()
    else:
        data = incr.read_bytes()
        incr.write_bytes(data[:100] + b"\x00not a command\r\n" + data[100:])
    return 0

"""What a space costs on the embedded engine: the time to open a served gate's spaces, and the memory each adds to
the engine (its graph, indexes and core registry) and to the gate (one engine connection, registry, keeper).

    uv run python bench/spaces_cost.py [--spaces 1 2 4 8]

For each count, a fresh data folder whose engine is started first (held, as a running gate would); then
`open_spaces` as `serve` opens them (a connection, migrations on each space's graph, its registry loaded), timed;
then the engine's and this process's resident memory (Linux /proc), and the growth per space over the first.
"""

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

import anyio

from write_gate.engines.embedded import EmbeddedEngine
from write_gate.serving import logs
from write_gate.serving.config import Settings
from write_gate.serving.spaces import open_spaces


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


async def measure(count: int) -> tuple[float, float, float]:
    data = Path(tempfile.mkdtemp(prefix="wg-bench-spaces-"))
    names = [f"space_{n}" for n in range(count)]
    settings = Settings(data_dir=data, spaces=names, default_space=names[0])
    keeper = EmbeddedEngine(data, settings.embedded_fsync.value)
    await anyio.to_thread.run_sync(keeper.join)  # the engine's own start is not a space's cost
    try:
        started = time.perf_counter()
        async with open_spaces(settings) as spaces:
            opened = time.perf_counter() - started
            engine = spaces.default.backend.engine.pid  # type: ignore[attr-defined]  # the embedded engine's
            return opened, rss_mib(engine), rss_mib(os.getpid())
    finally:
        await anyio.to_thread.run_sync(keeper.leave)
        shutil.rmtree(data, ignore_errors=True)


async def main(counts: list[int]) -> None:
    logs.configure("WARNING")
    rows = [(count, *await measure(count)) for count in counts]
    base = rows[0]
    print("| spaces | open all (s) | per space (s) | engine RSS (MiB) | gate RSS (MiB) | growth per added space |")
    print("|---|---|---|---|---|---|")
    for count, opened, engine, gate in rows:
        extra = count - base[0]
        growth = f"engine {(engine - base[2]) / extra:.1f}, gate {(gate - base[3]) / extra:.1f} MiB" if extra else "-"
        print(f"| {count} | {opened:.2f} | {opened / count:.2f} | {engine:.1f} | {gate:.1f} | {growth} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spaces", type=int, nargs="+", default=[1, 2, 4, 8])
    anyio.run(main, parser.parse_args().spaces)

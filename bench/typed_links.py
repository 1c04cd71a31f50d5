"""Median latency of a typed update that sets an array relationship property of 0, 1, 10 and 100 targets,
through the MCP SDK client in process on the embedded engine (tests/schemas/memorymesh's faction).

    uv run python bench/typed_links.py [--calls 200]

Each call names its targets by name without a nodeType (one lookup across labels, then the one statement),
and alternates between two target sets, so every call deletes the old set and merges a new one. Printed,
not asserted: a typed call is one statement whose size grows with its targets (at most 100).
"""

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client

from write_gate.serving import logs
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources
from write_gate.surface.server import build_server

SCHEMAS = Path(__file__).resolve().parent.parent / "tests" / "schemas" / "memorymesh"
PROV = {"source": "bench", "extraction_method": "manual", "reliability": 0.9}


async def call(client: Client, tool: str, args: dict) -> None:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.structured_content


async def measure(client: Client, size: int, calls: int) -> list[float]:
    sets = [[f"m{i}" for i in range(size)], [f"m{i}" for i in range(size, 2 * size)]]
    timings = []
    for i in range(calls):
        args = {"faction": {"name": "Guild", "members": sets[i % 2]}, **PROV}
        start = time.perf_counter()
        await call(client, "update_faction", args)
        timings.append(time.perf_counter() - start)
    return timings


async def main(calls: int) -> None:
    data = Path(tempfile.mkdtemp(prefix="wg-bench-"))
    settings = Settings(data_dir=data)  # the defaults: embedded engine, appendfsync always
    backend = await open_backend(settings)
    await load_into_graph(backend, read_sources([SCHEMAS]))
    try:
        async with Client(build_server(settings, auto_migrate=False)) as client:
            for i in range(200):
                await call(client, "add_npc", {"npc": {"name": f"m{i}", "role": "r", "status": "Active"}, **PROV})
            await call(client, "add_faction", {"faction": {"name": "Guild", "alignment": "Good"}, **PROV})
            for size in (0, 1, 10, 100):
                await measure(client, size, 10)  # warm-up
                ms = sorted(t * 1000 for t in await measure(client, size, calls))
                p90 = statistics.quantiles(ms, n=10)[8]
                print(f"update_faction, {size:>3} members: median {statistics.median(ms):7.2f} ms   p90 {p90:7.2f} ms")
    finally:
        await backend.close()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    logs.configure("WARNING")  # quiet: a benchmark prints figures, not a line per call
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    anyio.run(main, parser.parse_args().calls)

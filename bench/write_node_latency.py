"""Median latency of one `write_node` through the MCP SDK client on the embedded engine.

    uv run python bench/write_node_latency.py [--calls 2000]

Prints the median and percentiles for the in-process client/server pair and for stdio
against `write-gate serve`, measured in one run so the two are comparable.
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from write_gate.serving import logs
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import Settings
from write_gate.store.migrations import migrate
from write_gate.surface.server import build_server


async def measure(client: Client, calls: int) -> list[float]:
    timings = []
    for i in range(calls):
        args = {
            "label": "Person",
            "merge_keys": {"name": f"p{i % 500}"},  # a mix of creates and updates
            "properties": {"age": i},
            "source": "bench",
            "extraction_method": "manual",
            "reliability": 0.9,
        }
        start = time.perf_counter()
        result = await client.call_tool("write_node", args)
        timings.append(time.perf_counter() - start)
        assert not result.is_error, result.structured_content
    return timings


def report(name: str, timings: list[float]) -> None:
    ms = sorted(t * 1000 for t in timings)
    q = statistics.quantiles(ms, n=100)
    print(
        f"{name:<28} median {statistics.median(ms):6.3f} ms   p90 {q[89]:6.3f} ms   p99 {q[98]:6.3f} ms   n={len(ms)}"
    )


async def main(calls: int) -> None:
    data = Path(tempfile.mkdtemp(prefix="wg-bench-"))
    settings = Settings(data_dir=data)  # the defaults: embedded engine, appendfsync always
    backend = await open_backend(settings)
    await migrate(backend)  # the core registry
    try:
        async with Client(build_server(settings, auto_migrate=False)) as client:
            await measure(client, 100)  # warm-up
            report("in-process client", await measure(client, calls))
        exe = shutil.which("write-gate", path=str(Path(sys.executable).parent))
        env = {**os.environ, "WRITE_GATE_DATA_DIR": str(data), "WRITE_GATE_LOG_LEVEL": "WARNING"}
        params = StdioServerParameters(command=exe, args=["serve", "--no-migrate"], env=env)
        async with Client(params) as client:
            await measure(client, 100)
            report("stdio client (write-gate serve)", await measure(client, calls))
    finally:
        await backend.close()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    logs.configure("WARNING")  # quiet: a benchmark prints figures, not a line per call
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    anyio.run(main, parser.parse_args().calls)

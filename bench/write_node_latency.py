"""Median latency of one `write_node` through the MCP SDK client on the embedded engine.

    uv run python bench/write_node_latency.py [--calls 2000] [--fsync always,everysec]

Prints the median and percentiles for the in-process client/server pair and for stdio
against `write-gate serve`, for each append-only fsync policy asked (the default, always, first), measured in
one run so they are comparable.
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
        f"{name:<30} median {statistics.median(ms):6.3f} ms   p90 {q[89]:6.3f} ms   p99 {q[98]:6.3f} ms   n={len(ms)}"
    )


async def main(calls: int, fsyncs: list[str]) -> None:
    for fsync in fsyncs:
        await one_policy(calls, fsync)


async def one_policy(calls: int, fsync: str) -> None:
    data = Path(tempfile.mkdtemp(prefix="wg-bench-"))
    settings = Settings(data_dir=data, embedded_fsync=fsync)
    backend = await open_backend(settings)
    await migrate(backend)  # the core registry
    try:
        async with Client(build_server(settings, auto_migrate=False)) as client:
            await measure(client, 100)  # warm-up
            report(f"in-process client, {fsync}", await measure(client, calls))
        exe = shutil.which("write-gate", path=str(Path(sys.executable).parent))
        env = {
            **os.environ,
            "WRITE_GATE_DATA_DIR": str(data),
            "WRITE_GATE_LOG_LEVEL": "WARNING",
            "WRITE_GATE_EMBEDDED_FSYNC": fsync,
        }
        params = StdioServerParameters(command=exe, args=["serve", "--no-migrate"], env=env)
        async with Client(params) as client:
            await measure(client, 100)
            report(f"stdio client, {fsync}", await measure(client, calls))
    finally:
        await backend.close()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    logs.configure("WARNING")  # quiet: a benchmark prints figures, not a line per call
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--fsync", default="always,everysec", help="the policies to measure, in this order")
    args = parser.parse_args()
    anyio.run(main, args.calls, args.fsync.split(","))

"""Median latency of the read tools through the MCP SDK client (in process) on the embedded engine.

    uv run python bench/read_latency.py [--nodes 100000] [--calls 200]

Fills a fresh graph with N :Person nodes (name, two observations) and N/2 KNOWS relationships by
direct UNWIND statements, then times search_nodes, open_nodes and read_graph pages.
"""

import argparse
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client

from write_gate.core.cypher.statement import Statement
from write_gate.serving import logs
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import Settings
from write_gate.store.migrations import migrate
from write_gate.surface.server import build_server


async def fill(backend, nodes: int) -> None:
    for start in range(0, nodes, 10_000):
        rows = [
            {"name": f"person-{i:07d}", "observations": [f"likes topic {i % 997}", f"met at event {i % 311}"]}
            for i in range(start, min(nodes, start + 10_000))
        ]
        await backend.write(
            Statement(
                "UNWIND $rows AS row CREATE (:Person {name: row.name, observations: row.observations})", {"rows": rows}
            )
        )
    rng = random.Random(1)
    pairs = [
        {"a": f"person-{rng.randrange(nodes):07d}", "b": f"person-{rng.randrange(nodes):07d}"}
        for _ in range(nodes // 2)
    ]
    for start in range(0, len(pairs), 10_000):
        await backend.write(
            Statement(
                "UNWIND $rows AS row MATCH (a:Person {name: row.a}), (b:Person {name: row.b}) CREATE (a)-[:KNOWS]->(b)",
                {"rows": pairs[start : start + 10_000]},
            )
        )


async def timed(client: Client, tool: str, args_for, calls: int) -> list[float]:
    out = []
    for i in range(calls):
        started = time.perf_counter()
        result = await client.call_tool(tool, args_for(i))
        out.append((time.perf_counter() - started) * 1000)
        assert not result.is_error, result.structured_content
    return out


async def main(nodes: int, calls: int) -> None:
    data = Path(tempfile.mkdtemp(prefix="wg-bench-reads-"))
    settings = Settings(data_dir=data, embedded_fsync="everysec")
    backend = await open_backend(settings)
    try:
        await migrate(backend)
        started = time.perf_counter()
        await fill(backend, nodes)
        print(f"filled {nodes} nodes and {nodes // 2} relationships in {time.perf_counter() - started:.1f} s")
        rng = random.Random(2)
        async with Client(build_server(settings, auto_migrate=False)) as client:
            cases = {
                "search_nodes (limit 20)": (
                    "search_nodes",
                    lambda i: {"query": f"topic {rng.randrange(997)}", "limit": 20},
                ),
                "open_nodes (1 name)": ("open_nodes", lambda i: {"names": [f"person-{rng.randrange(nodes):07d}"]}),
                "open_nodes (10 names)": (
                    "open_nodes",
                    lambda i: {"names": [f"person-{rng.randrange(nodes):07d}" for _ in range(10)]},
                ),
                "read_graph (first page of 100)": ("read_graph", lambda i: {}),
            }
            for label, (tool, args_for) in cases.items():
                await timed(client, tool, args_for, 5)  # warm-up
                ms = await timed(client, tool, args_for, calls)
                print(f"{label:<32} median {statistics.median(ms):8.2f} ms   n={calls}   at {nodes} nodes")
    finally:
        await backend.close()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    logs.configure("WARNING")  # quiet: a benchmark prints figures, not a line per call
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    anyio.run(main, args.nodes, args.calls)

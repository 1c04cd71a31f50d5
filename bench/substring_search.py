"""Substring search as the graph grows (issue 35, item 2): search_nodes' cost at each size, and what writes cost.

    uv run --group bench python bench/substring_search.py --sizes 10000,100000,300000

One graph grows through write_nodes (bench/scale.py's :Person nodes: a name, "likes topic <i % 997>", "met at event
<i % 311>"); at each size every operation below is timed (medians, in process), and the data folder and the
engine's memory are measured. The queries: no node holds `topic 12 ` (a value never ends in a space) nor `zq<i>x`;
`topic 123` is held by 0.1% of the nodes, `person-0004242` by one, `likes` by all.
"""

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp import Client
from scale import BATCH, memory, person, person_item  # bench/scale.py: this folder is on the path

from write_gate.serving.config import Settings
from write_gate.surface.server import build_server

# name, profile, tool, calls, arguments of call i on a graph of n nodes
OPERATIONS: list[tuple[str, str, str, int, Any]] = [
    ("no match, 'topic 12 '", "gate", "search_nodes", 20, lambda n, i: {"query": f"topic {(i * 13) % 997} "}),
    ("no match, 'zq<i>x'", "gate", "search_nodes", 20, lambda n, i: {"query": f"zq{i}x"}),
    ("0.1% match, 'topic 123'", "gate", "search_nodes", 20, lambda n, i: {"query": f"topic {(i * 13) % 997}"}),
    ("one name", "gate", "search_nodes", 20, lambda n, i: {"query": person((i * 7919) % n)}),
    ("all match, 'likes'", "gate", "search_nodes", 20, lambda n, i: {"query": "likes"}),
    ("memory profile, 'topic 123'", "memory", "search_nodes", 20, lambda n, i: {"query": f"topic {(i * 13) % 997}"}),
    ("write_node, new node", "gate", "write_node", 200, lambda n, i: person_item(n + 10_000_000 + i)),
    (
        "write_node, new text on a node",
        "gate",
        "write_node",
        200,
        lambda n, i: {**person_item((i * 7919) % n), "properties": {"note": f"seen at place {i}"}},
    ),
    (
        "add_observations",
        "memory",
        "add_observations",
        200,
        lambda n, i: {"observations": [{"entityName": person((i * 104729) % n), "contents": [f"fact number {i}"]}]},
    ),
]


async def call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, (tool, str(result.content)[:300])
    return result.structured_content or {}


async def grow(client: Client, start: int, end: int) -> float:
    """Nodes start..end-1 through write_nodes; seconds per item (median over the batches)."""
    costs = []
    for first in range(start, end, BATCH):
        items = [person_item(i) for i in range(first, min(end, first + BATCH))]
        started = time.perf_counter()
        await call(client, "write_nodes", {"items": items})
        costs.append((time.perf_counter() - started) / len(items))
    return statistics.median(costs)


async def timed(client: Client, tool: str, calls: int, args: Any, nodes: int) -> float:
    await call(client, tool, {**({"limit": 20} if tool == "search_nodes" else {}), **args(nodes, 0)})
    samples = []
    for i in range(1, calls + 1):
        arguments = {**({"limit": 20} if tool == "search_nodes" else {}), **args(nodes, i)}
        started = time.perf_counter()
        await call(client, tool, arguments)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


async def main(sizes: list[int]) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="wg-bench-substring-"))
    settings = Settings(data_dir=data_dir, query_timeout_seconds=120)
    try:
        async with Client(build_server(settings)) as gate, Client(build_server(settings, profile="memory")) as mem:
            clients = {"gate": gate, "memory": mem}
            nodes = 0
            for size in sorted(sizes):
                per_item = await grow(gate, nodes, size)
                nodes = size
                print(f"{nodes:,} nodes: write_nodes {per_item * 1000:.3f} ms per item", flush=True)
                for name, profile, tool, calls, args in OPERATIONS:
                    ms = await timed(clients[profile], tool, calls, args, nodes)
                    print(f"  {name:32} {ms:8.2f} ms", flush=True)
                mem_now = memory(data_dir)
                print(f"  disk {mem_now['disk_mib']:.1f} MiB, engine {mem_now['engine_mib']:.0f} MiB", flush=True)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    asyncio.run(main([int(s) for s in parser.parse_args().sizes.split(",")]))

"""Two builds of the gate, the same calls alternated between them call by call: a change's cost on a noisy machine.

    uv run python bench/ab_builds.py --before /path/to/older/checkout [--calls 1000] [--nodes 2000] [--grow 0]

Each build is a checkout with its own `.venv` (`uv sync` there); this checkout is the "after". Each serves over
stdio (`write-gate serve`, the embedded engine, a fresh data folder of its own). The same calls go to one, then
the other, in turns, so the machine's load falls on both alike: `write_node` creating `--nodes` Persons, then
updating them (a new value each), then `search_nodes` for a substring held by one node in a hundred, and one held
by none. With `--grow N`, each graph first gets N other Persons through `write_nodes` (an old graph). Prints each
operation's median on each build and their ratio.
"""

import argparse
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

HERE = Path(__file__).resolve().parents[1]


def person(i: int, note: str) -> dict[str, Any]:
    return {
        "label": "Person",
        "merge_keys": {"name": f"person {i:07d}"},
        "properties": {"note": note, "age": i % 90},
        "source": "bench",
        "extraction_method": "manual",
    }


# name, tool, arguments of call i
OPERATIONS: list[tuple[str, str, Callable[[int, int], dict[str, Any]]]] = [
    ("write_node, new node", "write_node", lambda n, i: person(i % n, f"likes topic {i % 97}")),
    ("write_node, changed value", "write_node", lambda n, i: person(i % n, f"met at event {i}")),
    ("search_nodes, 1% match", "search_nodes", lambda n, i: {"query": f"topic {i % 97}", "limit": 20}),
    ("search_nodes, no match", "search_nodes", lambda n, i: {"query": f"zq{i}x", "limit": 20}),
]
BATCH = 500


async def grow(client: Client, count: int) -> None:
    """`count` Persons that the timed calls never touch, 500 a call."""
    for first in range(0, count, BATCH):
        items = [
            {**person(i, f"grown at step {i % 311}"), "merge_keys": {"name": f"grown {i:08d}"}}
            for i in range(first, min(count, first + BATCH))
        ]
        result = await client.call_tool("write_nodes", {"items": items})
        assert not result.is_error, str(result.content)[:300]


def server(checkout: Path, data: Path) -> StdioServerParameters:
    env = {**os.environ, "WRITE_GATE_DATA_DIR": str(data), "WRITE_GATE_LOG_LEVEL": "WARNING"}
    return StdioServerParameters(command=str(checkout / ".venv" / "bin" / "write-gate"), args=["serve"], env=env)


async def timed(client: Client, tool: str, arguments: dict[str, Any]) -> float:
    started = time.perf_counter()
    result = await client.call_tool(tool, arguments)
    took = time.perf_counter() - started
    assert not result.is_error, (tool, str(result.content)[:300])
    return took


async def main(before: Path, calls: int, nodes: int, grown: int) -> None:
    folders = [Path(tempfile.mkdtemp(prefix="wg-bench-ab-")) for _ in range(2)]
    try:
        async with (
            Client(server(before, folders[0])) as old,
            Client(server(HERE, folders[1])) as new,
        ):
            clients = {"before": old, "after": new}
            print(f"before: {before}\nafter: {HERE}")
            if grown:
                await grow(old, grown)
                await grow(new, grown)
                print(f"each graph grown by {grown:,} nodes first")
            for name, tool, arguments in OPERATIONS:
                samples: dict[str, list[float]] = {"before": [], "after": []}
                count = nodes if name.endswith("new node") else calls
                for i in range(count):
                    order = ("before", "after") if i % 2 == 0 else ("after", "before")
                    for build in order:
                        samples[build].append(await timed(clients[build], tool, arguments(nodes, i)))
                medians = {build: statistics.median(s) * 1000 for build, s in samples.items()}
                print(
                    f"{name:28} before {medians['before']:7.2f} ms  after {medians['after']:7.2f} ms  "
                    f"ratio {medians['after'] / medians['before']:.2f}  ({count} calls each)",
                    flush=True,
                )
    finally:
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True, help="an older checkout with its .venv")
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--grow", type=int, default=0, help="nodes written first, through write_nodes")
    args = parser.parse_args()
    anyio.run(main, args.before.resolve(), args.calls, args.nodes, args.grow)

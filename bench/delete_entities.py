"""What one delete_entities call costs as it deletes more: N entities in a chain of relations (memory profile,
over stdio, embedded engine, a fresh data folder each), then one call deleting half of them, timed at the client.

    uv run --group bench python bench/delete_entities.py [--sizes 400,800,1600,3200]

A call's cost should grow with what it deletes, not with its square: tests/unit/test_golden.py refuses the two
statement shapes that made it so (a list grown in a `reduce`, an aggregation grouped by a collected list).
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters


async def one(size: int) -> float:
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "WRITE_GATE_DATA_DIR": folder, "WRITE_GATE_LOG_LEVEL": "WARNING"}
        # This environment's gate, wherever the script is run from.
        gate = str(Path(sys.executable).parent / "write-gate")
        params = StdioServerParameters(command=gate, args=["serve", "--profile", "memory"], env=env)
        async with Client(params) as client:
            names = [f"P{i}" for i in range(size)]
            entities = [{"name": name, "entityType": "person", "observations": ["o1", "o2"]} for name in names]
            await client.call_tool("create_entities", {"entities": entities})
            chain = [{"from": a, "to": b, "relationType": "knows"} for a, b in zip(names, names[1:], strict=False)]
            await client.call_tool("create_relations", {"relations": chain})
            started = time.perf_counter()
            answer = await client.call_tool("delete_entities", {"entityNames": names[: size // 2]})
            elapsed = time.perf_counter() - started
            if answer.is_error:
                raise SystemExit(f"delete_entities failed: {answer.content[0].text}")
            return elapsed


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="400,800,1600,3200")
    sizes = [int(size) for size in parser.parse_args().sizes.split(",")]
    print(f"{'deleted':>8} {'seconds':>8} {'per entity':>11}")
    for size in sizes:
        elapsed = await one(size)
        print(f"{size // 2:>8} {elapsed:>8.2f} {elapsed / (size // 2) * 1000:>9.2f} ms", flush=True)


if __name__ == "__main__":
    anyio.run(main)

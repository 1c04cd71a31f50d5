"""What the alias guard costs a write_node statement, isolated from the MCP and gate layers.

    uv run --group bench python bench/alias_guard.py [--calls 5000]

Runs write_node's statement with and without its `WITH n WHERE n._alias_of IS NULL` line, alternating call by
call on one embedded engine (so machine load falls on both alike), and prints both medians.
"""

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import anyio

from write_gate.core.cypher.aliases import unless_alias
from write_gate.core.cypher.statement import Provenance, Statement
from write_gate.core.cypher.writes import write_node
from write_gate.serving import logs
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import Settings

PROVENANCE = Provenance(0.5, "bench", "manual", "0.1.0", "2026-01-01T00:00:00.000Z", "bench")


async def main(calls: int) -> None:
    data = Path(tempfile.mkdtemp(prefix="wg-bench-guard-"))
    backend = await open_backend(Settings(data_dir=data))
    await backend.ensure_index("Person", "_key")
    guard = unless_alias("n") + "\n"
    timings: dict[str, list[float]] = {"with guard": [], "without guard": []}
    try:
        for i in range(calls + 200):
            statement = write_node(
                "Person", {"name": f"p{i % 500}"}, {"age": i}, PROVENANCE, None, dialect=backend.dialect
            )
            for name, text in (("with guard", statement.text), ("without guard", statement.text.replace(guard, ""))):
                start = time.perf_counter()
                await backend.write(Statement(text, statement.params))
                if i >= 200:  # warm-up
                    timings[name].append(time.perf_counter() - start)
        for name, values in timings.items():
            print(f"write_node statement {name:<14} median {statistics.median(values) * 1000:.3f} ms   n={len(values)}")
    finally:
        await backend.close()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    logs.configure("WARNING")
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=5000)
    anyio.run(main, parser.parse_args().calls)

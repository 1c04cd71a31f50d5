"""The gate's startup heap is frozen once, by the first gate a process starts (serving/heap.py): the collector's
full collections then walk only what came after, which kept other agents' calls waiting 50 to 80 ms each
(BENCHMARKS.md). Run in a process of its own: the suite's workers have started gates already."""

import subprocess
import sys
from pathlib import Path

SCRIPT = """
import asyncio, gc, sys
from pathlib import Path
from mcp import Client
from write_gate.serving.config import Settings
from write_gate.surface.server import build_server

async def main(folder: str) -> None:
    before = gc.get_freeze_count()
    async with Client(build_server(Settings(data_dir=Path(folder)))) as client:
        await client.list_tools()
        first = gc.get_freeze_count()
    async with Client(build_server(Settings(data_dir=Path(folder)))) as client:
        await client.list_tools()
        second = gc.get_freeze_count()
    print(before, first, second)

asyncio.run(main(sys.argv[1]))
"""


def test_the_first_gate_a_process_starts_freezes_the_startup_heap_and_no_later_one_does(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "data")], capture_output=True, text=True, timeout=240
    )
    assert result.returncode == 0, result.stderr
    before, first, second = map(int, result.stdout.split())
    assert first > before + 50_000  # the modules, schemas and gate that startup built (about 137,000 objects)
    assert second <= first  # a second gate freezes nothing more (frozen objects of the first gate may be freed)

"""write_nodes at another commit against this tree's, alternating, so a change's effect is measured in one run.

    uv run python bench/batch_versions.py --base 1870e13 [--items 10000] [--rounds 3]

The other commit's `src/`, `migrations/` and `schemas/` are exported with `git archive` to a temporary folder;
each round runs one fresh process per version (a new embedded engine each), which validates a batch of new
:Person nodes as the tool does and times write_nodes on it: wall time, and the CPU time of the gate's process.
"""

import argparse
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MEASURE = """
import json, sys, tempfile, time, anyio
from pathlib import Path
from write_gate.access.agents import Agent
from write_gate.services.batch import WriteNodesRequest, checked, write_nodes
from write_gate.serving import logs
from write_gate.serving.assembly import open_gate
from write_gate.serving.config import Settings

async def main(items):
    rows = [{"label": "Person", "merge_keys": {"name": f"b{i:07d}"}, "properties": {"i": i, "tag": "bench"},
             "source": "bench", "extraction_method": "api"} for i in range(items)]
    async with open_gate(Settings(data_dir=Path(tempfile.mkdtemp(prefix="wg-versions-")))) as gate:
        wall, cpu = time.perf_counter(), time.process_time()
        batch = WriteNodesRequest.model_validate({"items": rows})
        result = await write_nodes(gate, checked(batch.items), Agent("bench"))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert result.written == items
    print(json.dumps({"wall": wall, "cpu": cpu}))

logs.configure("WARNING")
anyio.run(main, int(sys.argv[1]))
"""


def export(rev: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "src", "migrations", "schemas"], check=True, capture_output=True
    )
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def measure(src: Path, items: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, str(items)], capture_output=True, text=True, env=env, timeout=900
    )
    if out.returncode != 0:
        raise RuntimeError(f"the measurement failed under {src}:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True, help="the commit to compare with this tree")
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="wg-versions-src-"))
    try:
        versions = {args.base: export(args.base, folder), "this tree": ROOT / "src"}
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in versions}
        for _ in range(args.rounds):
            for name, src in versions.items():
                runs[name].append(measure(src, args.items))
        load = os.getloadavg()[0]
        print(f"write_nodes of {args.items:,} new nodes, median of {args.rounds} alternating rounds (load {load:.1f}):")
        for name, samples in runs.items():
            wall = statistics.median(s["wall"] for s in samples)
            cpu = statistics.median(s["cpu"] for s in samples)
            rate = args.items / wall
            print(f"  {name:>12}: {rate:8,.0f} nodes/s, {wall:.2f} s wall, {cpu:.2f} s CPU in the gate process")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()

"""The console's agents page counts (issue 35, item 3): the agent tallies against the scan of the history they
replace, at a history size, in one run.

    uv run --group bench python bench/agent_tallies.py [--changes 10000,100000] [--runs 5]

For each size, a fresh graph gets that many changes through write_nodes (four agents, 5,000 items a call, each
item a change of its own), with no keeper. Printed: the first fold (the whole history, as a gate upgraded onto it
folds it over its keeper's rounds), then the median of `--runs` reads of the tallies (a fold of what is new, and
what is newer than the settle horizon counted afresh) and of the old scan (every change and conflict record).
"""

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import anyio

from write_gate.access.agents import Agent
from write_gate.core.cypher import console
from write_gate.core.model import WriteNodeRequest
from write_gate.services import agent_tallies
from write_gate.services.batch import write_nodes
from write_gate.serving import logs
from write_gate.serving.assembly import open_gate
from write_gate.serving.config import Settings

AGENTS = ("planner", "scout", "scribe", "critic")


async def one_size(changes: int, runs: int) -> None:
    settings = Settings(
        data_dir=Path(tempfile.mkdtemp(prefix="wg-tallies-")), embedded_fsync="everysec", stats_fold_seconds=0
    )
    async with open_gate(settings) as gate:
        for first in range(0, changes, 5000):
            items = [
                WriteNodeRequest.model_validate(
                    {"label": "Person", "merge_keys": {"name": f"p{i}"}, "source": "bench", "extraction_method": "api"}
                )
                for i in range(first, min(changes, first + 5000))
            ]
            agent = Agent(AGENTS[first // 5000 % len(AGENTS)])
            assert (await write_nodes(gate, items, agent)).rejected == 0
        started = time.perf_counter()
        assert await agent_tallies.fold(gate.backend, 0.0)
        first_fold = time.perf_counter() - started
        tallies, scans = [], []
        for _ in range(runs):
            started = time.perf_counter()
            counted = await agent_tallies.current(gate.backend, 1.0)
            tallies.append(time.perf_counter() - started)
            started = time.perf_counter()
            await gate.backend.read(console.AGENT_WRITES)
            await gate.backend.read(console.AGENT_HELD_WRITES)
            scans.append(time.perf_counter() - started)
        assert counted is not None and sum(t.writes for t in counted.values()) == changes
    tally_ms, scan_ms = statistics.median(tallies) * 1000, statistics.median(scans) * 1000
    print(
        f"{changes:>9,} changes  first fold {first_fold:7.2f} s   tallies median {tally_ms:8.2f} ms"
        f"   scan median {scan_ms:9.2f} ms"
    )


async def main(sizes: list[int], runs: int) -> None:
    logs.configure("WARNING")
    for changes in sizes:
        await one_size(changes, runs)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--changes", default="10000,100000")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    anyio.run(main, [int(n) for n in args.changes.split(",")], args.runs)

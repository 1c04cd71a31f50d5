"""The ranked search against graph size: `search_nodes_ranked` through the in-process MCP client, on the embedded
engine, with `search_nodes` (substring: a scan) beside it, each size measured in one run.

    uv run --group bench python bench/ranked_search.py [--sizes 10000,100000] [--calls 50]

Nodes are written through the gate (`write_nodes`, 5,000 a call), each a Person with a unique name and two
observations drawn from small vocabularies, so a query for a rare word finds a handful and a common word
thousands. Prints one line per size and query: the median, and how the candidates were found.
"""

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from write_gate.access.agents import Agent
from write_gate.core.model import WriteNodeRequest
from write_gate.services.batch import write_nodes
from write_gate.serving import logs
from write_gate.serving.assembly import open_gate
from write_gate.serving.config import Settings
from write_gate.surface.server import build_server

TOPICS = [f"topic{i}" for i in range(997)]
PLACES = ["lisbon", "oslo", "quito", "hanoi", "dakar", "lima", "perth", "cork", "bern", "riga"]

# (tool, arguments, what it shows)
QUERIES: list[tuple[str, dict[str, Any], str]] = [
    ("search_nodes_ranked", {"query": "topic42"}, "rare word (about N/997 nodes)"),
    ("search_nodes_ranked", {"query": "lisbon AND topic42"}, "two words, AND"),
    ("search_nodes_ranked", {"query": "lisbon topic42"}, "two words, any (common OR rare)"),
    ("search_nodes_ranked", {"query": '"met in lisbon"'}, "phrase, common (N/10)"),
    ("search_nodes_ranked", {"query": "topc42~"}, "typo, alone"),
    ("search_nodes_ranked", {"query": "lisbon", "fuzzy": True}, "common word, fuzzy"),
    ("search_nodes", {"query": "topic42 "}, "substring (scan), for comparison"),
]


def item(i: int) -> dict[str, Any]:
    return {
        "label": "Person",
        "merge_keys": {"name": f"person {i:07d}"},
        "properties": {"observations": [f"likes {TOPICS[i % 997]} a lot", f"met in {PLACES[i % 10]}"]},
        "source": "bench",
        "extraction_method": "api",
    }


async def grow(settings: Settings, start: int, end: int) -> None:
    async with open_gate(settings) as gate:
        for first in range(start, end, 5000):
            requests = [WriteNodeRequest.model_validate(item(i)) for i in range(first, min(end, first + 5000))]
            assert (await write_nodes(gate, requests, Agent("bench"))).rejected == 0


async def measure(settings: Settings, size: int, calls: int) -> None:
    async with Client(build_server(settings, auto_migrate=False)) as client:
        for tool, args, what in QUERIES:
            timings, answer = [], None
            for _ in range(calls):
                started = time.perf_counter()
                answer = await client.call_tool(tool, args)
                timings.append(time.perf_counter() - started)
            assert answer is not None and not answer.is_error, answer
            content = answer.structured_content or {}
            found = len(content.get("results", content.get("entities", [])))
            how = content.get("searched_by", "scan")
            print(
                f"{size:>9,} nodes  {tool:<20} {str(args):<44} {statistics.median(timings) * 1000:8.2f} ms  "
                f"{how:<5} {found:>3} on the page   ({what})"
            )


async def main(sizes: list[int], calls: int) -> None:
    settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="wg-bench-")), embedded_fsync="everysec", toolsets="all")
    written = 0
    for size in sorted(sizes):
        await grow(settings, written, size)
        written = size
        await measure(settings, size, calls)


if __name__ == "__main__":
    logs.configure("WARNING")
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--calls", type=int, default=50)
    args = parser.parse_args()
    anyio.run(main, [int(s) for s in args.sizes.split(",")], args.calls)

"""What embeddings cost (issue 38): `write_node` with WRITE_GATE_EMBEDDINGS=local against off, and the semantic and
hybrid searches' latency at a graph size, through the in-process MCP client on the embedded engine, in one run.

    uv run python bench/embeddings.py [--calls 300] [--nodes 10000] [--searches 50]

Each write_node writes a new Person with a name and two observations (three texts to embed, none cached). The
graph for the searches is grown with write_nodes (embeddings on), 5,000 a call. Prints medians.
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

JOBS = ["aerospace engineer", "baker", "cellist", "data scientist", "nurse", "carpenter", "pilot", "chemist"]
CITIES = ["lisbon", "oslo", "quito", "hanoi", "dakar", "lima", "perth", "cork", "bern", "riga"]


def item(i: int, prefix: str = "person") -> dict[str, Any]:
    return {
        "label": "Person",
        "merge_keys": {"name": f"{prefix} {i:07d}"},
        "properties": {"observations": [f"works as a {JOBS[i % 8]} number {i}", f"lives in {CITIES[i % 10]}"]},
        "source": "bench",
        "extraction_method": "api",
    }


async def timed(client: Client, tool: str, args: dict[str, Any]) -> float:
    started = time.perf_counter()
    answer = await client.call_tool(tool, args)
    elapsed = time.perf_counter() - started
    assert not answer.is_error, answer.structured_content
    return elapsed


async def write_cost(base: Settings, calls: int) -> None:
    medians = {}
    for mode in ("off", "local"):
        settings = base.model_copy(update={"embeddings": mode, "graph_name": f"write_{mode}"})
        async with Client(build_server(settings)) as client:
            await timed(client, "write_node", item(-1, mode))  # the model loaded, the index made: not measured
            timings = [await timed(client, "write_node", item(i, mode)) for i in range(calls)]
        medians[mode] = statistics.median(timings) * 1000
        print(f"write_node, embeddings {mode:<5}  median {medians[mode]:6.2f} ms over {calls} calls")
    print(f"write_node, embeddings local / off: {medians['local'] / medians['off']:.2f}x")


async def search_latency(base: Settings, nodes: int, searches: int) -> None:
    settings = base.model_copy(update={"embeddings": "local", "graph_name": "search", "toolsets": "all"})
    async with open_gate(settings) as gate:
        for first in range(0, nodes, 5000):
            requests = [WriteNodeRequest.model_validate(item(i)) for i in range(first, min(nodes, first + 5000))]
            assert (await write_nodes(gate, requests, Agent("bench"))).rejected == 0
    async with Client(build_server(settings, auto_migrate=False)) as client:
        for mode, query in (
            ("fulltext", "lisbon"),
            ("semantic", "who builds rockets?"),
            ("hybrid", "who builds rockets in lisbon?"),
        ):
            args = {"query": query, "mode": mode, "limit": 10}
            await timed(client, "search_nodes_ranked", args)
            timings = [await timed(client, "search_nodes_ranked", args) for _ in range(searches)]
            print(
                f"{nodes:>9,} nodes  search_nodes_ranked {mode:<8} median {statistics.median(timings) * 1000:7.2f} ms "
                f"over {searches} searches"
            )


async def main(calls: int, nodes: int, searches: int) -> None:
    # The searches' gate opens the grown graph again: at 100,000 entities the engine replays its append-only file
    # for about two minutes (measured 108 s), past the default wait for it.
    folder = Path(tempfile.mkdtemp(prefix="wg-bench-"))
    base = Settings(data_dir=folder, embedded_fsync="everysec", embedded_start_timeout_seconds=600)
    await write_cost(base, calls)
    await search_latency(base, nodes, searches)


if __name__ == "__main__":
    logs.configure("WARNING")
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--searches", type=int, default=50)
    args = parser.parse_args()
    anyio.run(main, args.calls, args.nodes, args.searches)

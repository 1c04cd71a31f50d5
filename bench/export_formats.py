"""The export against its formats: the export read (every node page and the relationships between them) and
each format's rendering of it, on the embedded engine, and export_graph whole through the in-process MCP client.

    uv run --group bench python bench/export_formats.py [--nodes 10000] [--relations 20000] [--calls 3]
        [--formats json,prov-turtle]

Nodes are written through the gate (`write_nodes`, 5,000 a call): Persons with two observations, two tags, an
importance and an age; relations (RELATED_TO) through `write_relationships`, each node to the next ones by a
fixed stride, so every node has about relations/nodes of them. Prints the median of each: the read, each format's
rendering (and the size of its text), and the tool's whole call for json.
"""

import argparse
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from write_gate.access.agents import Agent
from write_gate.core.model import WriteNodeRequest, WriteRelationshipRequest
from write_gate.interchange.exports import EXPORTERS, render
from write_gate.services.batch import write_nodes, write_relationships
from write_gate.services.export_read import read_export
from write_gate.serving import logs
from write_gate.serving.assembly import open_gate
from write_gate.serving.config import Settings
from write_gate.surface.server import build_server

STAMP = {"source": "bench", "extraction_method": "api"}


def person(i: int) -> dict[str, Any]:
    return {
        "label": "Person",
        "merge_keys": {"name": f"person {i:07d}"},
        "properties": {
            "observations": [f"likes topic {i % 97}", f"met in city {i % 10}"],
            "tags": [f"t{i % 5}", "bench"],
            "importance": i % 11,
            "age": 20 + i % 60,
        },
        **STAMP,
    }


def related(i: int, j: int) -> dict[str, Any]:
    ends = {"from_keys": {"name": f"person {i:07d}"}, "to_keys": {"name": f"person {j:07d}"}}
    return {"type": "RELATED_TO", "from_label": "Person", "to_label": "Person", **ends, **STAMP}


async def grow(settings: Settings, nodes: int, relations: int) -> None:
    per_node = max(1, -(-relations // nodes))
    pairs = [(i, (i + k * 7) % nodes) for k in range(1, per_node + 1) for i in range(nodes)][:relations]
    async with open_gate(settings) as gate:
        for first in range(0, nodes, 5000):
            batch = [WriteNodeRequest.model_validate(person(i)) for i in range(first, min(nodes, first + 5000))]
            assert (await write_nodes(gate, batch, Agent("bench"))).rejected == 0
        for first in range(0, len(pairs), 5000):
            batch = [WriteRelationshipRequest.model_validate(related(i, j)) for i, j in pairs[first : first + 5000]]
            assert (await write_relationships(gate, batch, Agent("bench"))).rejected == 0


async def median_of(calls: int, work: Callable[[], Awaitable[Any]]) -> tuple[float, Any]:
    timings, result = [], None
    for _ in range(calls):
        started = time.perf_counter()
        result = await work()
        timings.append(time.perf_counter() - started)
    return statistics.median(timings), result


async def measure(settings: Settings, calls: int, formats: list[str]) -> None:
    async with open_gate(settings, auto_migrate=False) as gate:
        took, graph = await median_of(calls, lambda: read_export(gate))
    print(f"export read: {len(graph.nodes):,} nodes, {len(graph.relations):,} relations  {took * 1000:9.1f} ms")
    for name in formats:

        async def rendered(name: str = name) -> str:
            return render(name, graph)

        took, text = await median_of(calls, rendered)
        print(f"  {name:<13} {took * 1000:9.1f} ms  {len(text.encode()) / 1e6:7.2f} MB")
    async with Client(build_server(settings, auto_migrate=False)) as client:
        took, answer = await median_of(calls, lambda: client.call_tool("export_graph", {"format": "json"}))
    assert not answer.is_error, answer.structured_content
    print(f"export_graph json through the MCP client (in process): {took * 1000:9.1f} ms")


async def main(nodes: int, relations: int, calls: int, formats: list[str]) -> None:
    folder = Path(tempfile.mkdtemp(prefix="wg-bench-"))
    # The limit off: a whole export is timed as one call, past the 10 s a served read call is held to.
    settings = Settings(data_dir=folder, embedded_fsync="everysec", call_limit_seconds=0)
    started = time.perf_counter()
    await grow(settings, nodes, relations)
    print(f"wrote {nodes:,} nodes and {relations:,} relations in {time.perf_counter() - started:.1f} s")
    await measure(settings, calls, formats)


if __name__ == "__main__":
    logs.configure("WARNING")
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--relations", type=int, default=20_000)
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--formats", default=",".join(EXPORTERS), help="the formats to render, comma-separated")
    args = parser.parse_args()
    formats = args.formats.split(",")
    if unknown := set(formats) - set(EXPORTERS):
        parser.error(f"unknown formats: {', '.join(sorted(unknown))}")
    anyio.run(main, args.nodes, args.relations, args.calls, formats)

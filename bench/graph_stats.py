"""get_graph_stats' cost through the MCP SDK client on the embedded engine.

    uv run --group bench python bench/graph_stats.py [--nodes 10000] [--runs 5]

Writes `--nodes` nodes through `write_nodes` (Person, Organization and Project, from three agents and four
sources, at several confidences) and one WORKS_ON relationship per two nodes through `write_relationships`,
then times `get_graph_stats` and prints the median (and the first call's: it folds what the served gate's keeper
had not yet), with the totals it answered.
"""

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from write_gate.serving import logs
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import Settings
from write_gate.store.migrations import migrate
from write_gate.surface.server import build_server

LABELS = ("Person", "Organization", "Project")
SOURCES = ("hr", "wiki", "crm", "notes")
METHODS = ("api", "manual", "llm")
BATCH = 1000


def node(i: int) -> dict[str, Any]:
    return {
        "label": LABELS[i % len(LABELS)],
        "merge_keys": {"name": f"n{i}"},
        "source": SOURCES[i % len(SOURCES)],
        "extraction_method": METHODS[i % len(METHODS)],
    }


def link(i: int) -> dict[str, Any]:
    """Person n(3i) WORKS_ON Project n(3i+2)."""
    return {
        "type": "WORKS_ON",
        "from_label": "Person",
        "from_keys": {"name": f"n{3 * i}"},
        "to_label": "Project",
        "to_keys": {"name": f"n{3 * i + 2}"},
        "source": SOURCES[i % len(SOURCES)],
        "extraction_method": "api",
    }


async def write_all(client: Client, tool: str, items: list[dict[str, Any]]) -> None:
    for start in range(0, len(items), BATCH):
        chunk = items[start : start + BATCH]
        result = await client.call_tool(tool, {"items": chunk})
        assert not result.is_error and result.structured_content["written"] == len(chunk), result.structured_content


async def main(count: int, runs: int) -> None:
    data = Path(tempfile.mkdtemp(prefix="wg-bench-stats-"))
    settings = Settings(data_dir=data)
    backend = await open_backend(settings)
    await migrate(backend)
    try:
        for agent in ("bot-a", "bot-b", "bot-c"):  # three agents, each writing a third
            writer = settings.model_copy(update={"agent": agent})
            async with Client(build_server(writer, auto_migrate=False), read_timeout_seconds=600) as client:
                share = [node(i) for i in range(count) if i % 3 == ("bot-a", "bot-b", "bot-c").index(agent)]
                await write_all(client, "write_nodes", share)
        async with Client(build_server(settings, auto_migrate=False), read_timeout_seconds=600) as client:
            await write_all(client, "write_relationships", [link(i) for i in range(count // 3)])
            timings, answer = [], {}
            for _ in range(runs):
                start_at = time.perf_counter()
                result = await client.call_tool("get_graph_stats", {})
                timings.append(time.perf_counter() - start_at)
                assert not result.is_error, result.structured_content
                answer = result.structured_content
        print(
            f"get_graph_stats over {answer['totalEntities']:,} nodes and {answer['totalRelations']:,} relationships: "
            f"median {statistics.median(timings) * 1000:,.0f} ms of {runs} (the first {timings[0] * 1000:,.0f} ms) "
            f"({len(answer['entitiesByAgent'])} agents, {len(answer['entitiesBySource'])} sources)"
        )
    finally:
        await backend.close()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    logs.configure("WARNING")
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    ns = parser.parse_args()
    anyio.run(main, ns.nodes, ns.runs)

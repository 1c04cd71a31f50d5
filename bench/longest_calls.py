"""The longest calls (issue 37: no single call runs longer than the configured limit on a graph of 1,000,000
nodes): each read tool once, with the heaviest arguments the docs allow, on a graph grown as bench/scale.py grows
it, through an in-process MCP client on the defaults (WRITE_GATE_CALL_LIMIT_SECONDS 10). Printed: each call's
seconds and whether it answered or was stopped at the limit (QUERY_TIMEOUT).

    uv run --group bench python bench/longest_calls.py [--nodes 1000000]
"""

import argparse
import asyncio
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp import Client
from scale import grow, person

from write_gate.services.change_feed import MAX_LIMIT as FEED_LIMIT
from write_gate.services.reads import MAX_LIMIT, MAX_OPEN_NAMES
from write_gate.services.resolution import MAX_LIMIT as PAIRS_LIMIT
from write_gate.services.resolution import MAX_PAGE_SIZE
from write_gate.services.search import MAX_RANKED_LIMIT
from write_gate.serving.config import Settings
from write_gate.surface.server import build_server


def heavy_calls(nodes: int) -> list[tuple[str, str, dict[str, Any]]]:
    """(profile, tool, arguments): the heaviest each read tool takes."""
    names = [person(i) for i in range(min(nodes, MAX_OPEN_NAMES))]
    return [
        ("gate", "export_graph", {"format": "json"}),
        ("memory", "read_graph", {}),
        ("memory", "search_nodes", {"query": "e"}),  # matches every node
        ("memory", "open_nodes", {"names": names}),
        ("gate", "read_graph", {"limit": MAX_LIMIT}),
        ("gate", "search_nodes", {"query": "e", "limit": MAX_LIMIT}),
        ("gate", "search_nodes_ranked", {"query": "likes topic met event", "limit": MAX_RANKED_LIMIT}),
        ("gate", "search_nodes_ranked", {"query": "likes topic", "limit": MAX_RANKED_LIMIT, "fuzzy": True}),
        ("gate", "open_nodes", {"names": names}),
        ("gate", "find_duplicates", {"labels": ["Person"], "page_size": MAX_PAGE_SIZE, "limit": PAIRS_LIMIT}),
        ("gate", "changes_since", {"limit": FEED_LIMIT}),
        ("gate", "get_graph_stats", {}),
    ]


async def main(nodes: int) -> None:
    data = Path(tempfile.mkdtemp(prefix="wg-longest-"))
    settings = Settings(data_dir=data, embedded_fsync="everysec", toolsets="all")
    try:
        server = build_server(settings)
        async with (
            Client(server, read_timeout_seconds=600) as gate,
            Client(build_server(settings, profile="memory", auto_migrate=False), read_timeout_seconds=600) as memory,
        ):
            started = time.perf_counter()
            await grow(gate, 0, nodes)
            print(f"grew {nodes:,} nodes in {time.perf_counter() - started:.0f} s", flush=True)
            clients = {"gate": gate, "memory": memory}
            print(f"limit: {settings.call_limit_seconds:g} s a read call\n")
            print("| profile | call | seconds | outcome |\n|---|---|---|---|")
            longest = 0.0
            for profile, tool, args in heavy_calls(nodes):
                started = time.perf_counter()
                result = await clients[profile].call_tool(tool, args)
                took = time.perf_counter() - started
                longest = max(longest, took)
                code = (result.structured_content or {}).get("error_code") if result.is_error else "answered"
                shown = {k: (f"{len(v):,} names" if k == "names" else v) for k, v in args.items()}
                print(f"| {profile} | {tool} {shown} | {took:.2f} | {code} |", flush=True)
            print(f"\nlongest call: {longest:.2f} s")
    finally:
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=1_000_000)
    asyncio.run(main(parser.parse_args().nodes))

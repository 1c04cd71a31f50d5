"""The mesh profile's search_nodes for a "Key: Value" query against a plain one (in process, embedded engine).

    uv run --group bench python bench/mesh_search.py [--sizes 1000,10000] [--calls 30]

Loads the role-playing schemas (schemas/examples/rpg), writes N npcs with `add_nodes` (metadata "Role: <role>",
"Status: Active", one role in ten a Wizard), then times search_nodes (neighbours off, limit 20) for `wizard` (a
plain substring search), `Role: Wizard` and `le: wiz` (candidates from the part after ": ", kept where the node
shows the whole query) and `status` (within a field's key: the npcs read a page at a time): medians.
"""

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client

from write_gate.serving import logs
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import Settings
from write_gate.store.migrations import migrate
from write_gate.store.schema_files import load_into_graph, read_sources
from write_gate.surface.server import build_server

RPG = Path(__file__).resolve().parents[1] / "schemas" / "examples" / "rpg"
ROLES = ["Wizard", "Warrior", "Merchant", "Noble", "Peasant", "Thief", "Warrior", "Merchant", "Noble", "Peasant"]
QUERIES = ["wizard", "Role: Wizard", "le: wiz", "status"]
BATCH = 500


async def run(nodes: int, calls: int) -> dict[str, float]:
    data = Path(tempfile.mkdtemp(prefix="wg-bench-mesh-"))
    settings = Settings(data_dir=data, embedded_fsync="everysec")
    backend = await open_backend(settings)
    try:
        await migrate(backend)
        await load_into_graph(backend, read_sources([RPG]))
        async with Client(build_server(settings, profile="mesh", auto_migrate=False)) as client:
            for start in range(0, nodes, BATCH):
                batch = [
                    {
                        "name": f"npc {i:07d}",
                        "nodeType": "npc",
                        "metadata": [f"Role: {ROLES[i % 10]}", "Status: Active"],
                    }
                    for i in range(start, min(nodes, start + BATCH))
                ]
                answer = await client.call_tool("add_nodes", {"nodes": batch})
                assert not answer.is_error, answer.structured_content
            medians = {}
            for query in QUERIES:
                times = []
                for _ in range(calls):
                    started = time.perf_counter()
                    answer = await client.call_tool("search_nodes", {"query": query, "neighbors": False, "limit": 20})
                    times.append((time.perf_counter() - started) * 1000)
                    assert not answer.is_error and answer.structured_content is not None
                    assert len(answer.structured_content["data"]["nodes"]) == 20
                medians[query] = statistics.median(times)
            return medians
    finally:
        await backend.close()
        shutil.rmtree(data, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--calls", type=int, default=30)
    args = parser.parse_args()
    logs.configure("WARNING")
    for size in (int(s) for s in args.sizes.split(",")):
        medians = anyio.run(run, size, args.calls)
        shown = ", ".join(f"{query!r} {ms:.2f} ms" for query, ms in medians.items())
        print(f"{size:>9,} npcs: {shown}")


if __name__ == "__main__":
    main()

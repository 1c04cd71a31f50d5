"""Scale: what each operation costs, and what the server holds in memory, as the graph grows (embedded engine).

    uv run --group bench python bench/run.py --only-scale --sizes 100000,1000000

The graph is written through the gate as a fleet would write it: `write_nodes` in batches of 10,000 :Person
nodes (a name, two observations), and `write_relationships` for one RELATED_TO per two nodes, all through the MCP
client in process. At each size in `--sizes` every operation in OPERATIONS is timed (medians), with the
resident memory of the engine process (redis-server), of the gate process, and the data folder's size on disk.

To measure one more operation, add one line to OPERATIONS.
"""

import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
from mcp import Client

from write_gate.serving.config import Settings
from write_gate.surface.server import build_server

BATCH = 10_000  # items per write_nodes / write_relationships call: WRITE_GATE_MAX_BATCH_ITEMS's default
MIB = 2**20


def person(i: int) -> str:
    return f"person-{i:07d}"


def person_item(i: int) -> dict[str, Any]:
    return {
        "label": "Person",
        "merge_keys": {"name": person(i)},
        "properties": {"observations": [f"likes topic {i % 997}", f"met at event {i % 311}"]},
        "source": "bench",
        "extraction_method": "api",
    }


def related_item(a: int, b: int) -> dict[str, Any]:
    return {
        "type": "RELATED_TO",
        "from_label": "Person",
        "from_keys": {"name": person(a)},
        "to_label": "Person",
        "to_keys": {"name": person(b)},
        "source": "bench",
        "extraction_method": "api",
    }


@dataclass(frozen=True)
class Operation:
    """One tool, timed `calls` times at each size; `args(nodes, call, previous answer)` gives each call's
    arguments (the previous answer lets a reader walk pages)."""

    name: str
    tool: str
    calls: int
    args: Callable[[int, int, dict[str, Any] | None], dict[str, Any]]


def _next_page(previous: dict[str, Any] | None) -> dict[str, Any]:
    cursor = (previous or {}).get("next_cursor")
    return {"limit": 100, **({"cursor": cursor} if cursor else {})}


OPERATIONS = [
    Operation("write_node", "write_node", 200, lambda n, i, _: person_item(n + 10_000_000 + i)),
    Operation("search_nodes", "search_nodes", 20, lambda n, i, _: {"query": f"topic {(i * 13) % 997} ", "limit": 20}),
    # Ranked: one node's name (its words are person and 0004242: the number is unique), and a phrase 0.1% hold.
    Operation("ranked, a name", "search_nodes_ranked", 20, lambda n, i, _: {"query": f"{(i * 7919) % n:07d}"}),
    Operation("ranked, a phrase", "search_nodes_ranked", 20, lambda n, i, _: {"query": f'"topic {(i * 13) % 997}"'}),
    Operation("open_nodes", "open_nodes", 100, lambda n, i, _: {"names": [person((i * 7919) % n)]}),
    Operation("read_graph page", "read_graph", 30, lambda n, i, previous: _next_page(previous)),
]
# Measured from the ingest itself: the batch calls that grew the graph to each size, per item.
INGEST = ("write_nodes per item", "write_relationships per item")


def engine_processes(data_dir: Path) -> list[psutil.Process]:
    """The embedded engine serving `data_dir`: the redis-server whose command line names its socket there."""
    found = []
    for process in psutil.process_iter(["name", "cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if "redis-server" in (process.info["name"] or "") + cmdline and str(data_dir) in cmdline:
            found.append(process)
    return found


def memory(data_dir: Path) -> dict[str, float]:
    engine = sum(p.memory_info().rss for p in engine_processes(data_dir))
    disk = sum(f.stat().st_size for f in data_dir.rglob("*") if f.is_file())
    return {"engine_mib": engine / MIB, "gate_mib": psutil.Process().memory_info().rss / MIB, "disk_mib": disk / MIB}


async def _call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, (tool, str(result.content)[:500])
    return result.structured_content or {}


async def _batch(client: Client, tool: str, items: list[dict[str, Any]]) -> float:
    """Seconds per item of one batch call; every item must be written."""
    started = time.perf_counter()
    answer = await _call(client, tool, {"items": items})
    elapsed = time.perf_counter() - started
    assert answer["written"] == len(items), [o for o in answer["items"] if o["status"] != "written"][:3]
    return elapsed / len(items)


async def grow(client: Client, start: int, end: int) -> dict[str, float]:
    """Nodes start..end-1 through write_nodes, then one RELATED_TO from every second one of them to a node written
    earlier (any of 0..end-1) through write_relationships: the median per-item cost of each."""
    node_costs, link_costs = [], []
    for first in range(start, end, BATCH):
        node_costs.append(
            await _batch(client, "write_nodes", [person_item(i) for i in range(first, min(end, first + BATCH))])
        )
    links = [related_item(i, (i * 7919 + 1) % end) for i in range(start, end, 2)]
    for first in range(0, len(links), BATCH):
        link_costs.append(await _batch(client, "write_relationships", links[first : first + BATCH]))
    return {INGEST[0]: statistics.median(node_costs) * 1000, INGEST[1]: statistics.median(link_costs) * 1000}


async def time_operation(client: Client, operation: Operation, nodes: int) -> float:
    """Median milliseconds of `operation` on a graph of `nodes`, after one untimed call."""
    previous = await _call(client, operation.tool, operation.args(nodes, 0, None))
    samples = []
    for i in range(1, operation.calls + 1):
        started = time.perf_counter()
        previous = await _call(client, operation.tool, operation.args(nodes, i, previous))
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


async def scale(sizes: list[int], log: Callable[[str], None] = print) -> dict[str, Any]:
    """Grow one graph through each size in turn and measure at each; returns the points for the report."""
    data_dir = Path(tempfile.mkdtemp(prefix="wg-scale-"))
    settings = Settings(data_dir=data_dir, query_timeout_seconds=120)
    points = []
    try:
        async with Client(build_server(settings)) as client:
            nodes, ingest_s = 0, 0.0
            for size in sorted(sizes):
                started = time.perf_counter()
                costs = await grow(client, nodes, size)
                nodes, ingest_s = size, ingest_s + time.perf_counter() - started
                ops = {**costs, **{op.name: await time_operation(client, op, nodes) for op in OPERATIONS}}
                load = os.getloadavg()[0]  # the machine's: a shared one's load is part of every figure
                point = {"nodes": nodes, "ingest_s": ingest_s, "ops_ms": ops, "load": load, **memory(data_dir)}
                points.append(point)
                log(
                    f"scale {nodes:>9,} nodes (ingested in {ingest_s:,.0f} s): "
                    + ", ".join(f"{name} {ms:.2f} ms" for name, ms in ops.items())
                    + f"; engine {point['engine_mib']:,.0f} MiB, gate {point['gate_mib']:,.0f} MiB, "
                    f"disk {point['disk_mib']:,.0f} MiB"
                )
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    return {"operations": [*INGEST, *(op.name for op in OPERATIONS)], "points": points}


def plot(results: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = results["points"]
    xs = [p["nodes"] for p in points]
    fig, (cost, mem) = plt.subplots(1, 2, figsize=(12, 4.8))
    for name in results["operations"]:
        cost.plot(xs, [p["ops_ms"][name] for p in points], "o-", markersize=4, label=name)
    cost.set_xscale("log")
    cost.set_yscale("log")
    cost.set_xlabel(":Person nodes in the graph (and one RELATED_TO per two)")
    cost.set_ylabel("median latency (ms; batches: per item)")
    cost.set_title("Cost of each operation (in-process MCP client)")
    cost.legend(fontsize=8)
    for key, label in (
        ("engine_mib", "engine (redis-server) RSS"),
        ("gate_mib", "gate process RSS"),
        ("disk_mib", "data folder on disk"),
    ):
        mem.plot(xs, [p[key] for p in points], "s-", markersize=4, label=label)
    mem.set_xscale("log")
    mem.set_yscale("log")
    mem.set_xlabel(":Person nodes in the graph")
    mem.set_ylabel("MiB")
    mem.set_title("Memory and disk")
    mem.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def report_lines(results: dict[str, Any]) -> list[str]:
    names = results["operations"]
    lines = [
        "| nodes | " + " | ".join(names) + " | engine RSS | gate RSS | on disk | ingest time | load |",
        "|---|" + "---|" * (len(names) + 5),
    ]
    for p in results["points"]:
        load = f"{p['load']:.1f}" if "load" in p else ""  # points measured before it was recorded have none
        lines.append(
            f"| {p['nodes']:,} | "
            + " | ".join(f"{p['ops_ms'][name]:.2f} ms" for name in names)
            + f" | {p['engine_mib']:,.0f} MiB | {p['gate_mib']:,.0f} MiB | {p['disk_mib']:,.0f} MiB"
            + f" | {p['ingest_s']:,.0f} s | {load} |"
        )
    return lines

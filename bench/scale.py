"""Scale: what each operation costs, and what the server holds in memory, as the graph grows (embedded engine).

    uv run --group bench python bench/run.py --only-scale --sizes 100000,1000000

The graph is written through the gate as a fleet would write it: `write_nodes` in batches of 10,000 :Person
nodes (a name, two observations), and `write_relationships` for one RELATED_TO per two nodes, all through the MCP
client in process. At each size in `--sizes` every operation in OPERATIONS is timed (medians), with the
resident memory of the engine process (redis-server), of the gate process, and the data folder's size on disk.

Before the operations are timed at a size, the keeper's work on what the growth wrote is done (`settle`): every due
subject folded into the statistics and every change record into the agent tallies, by the bench alongside the
keeper. So each call is timed on a graph at rest, as an agent meets it once an ingest is over; the time that took
is reported (`settle_s`).

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

from write_gate.core.clock import utc_now
from write_gate.services import agent_tallies, stat_counts
from write_gate.services.gate import Gate
from write_gate.services.reads import encode_cursor
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
    arguments (the previous answer lets a reader walk pages); `profile` is the server's (the gate's, or the
    official memory server's tools)."""

    name: str
    tool: str
    calls: int
    args: Callable[[int, int, dict[str, Any] | None], dict[str, Any]]
    profile: str = "gate"


def _next_page(previous: dict[str, Any] | None) -> dict[str, Any]:
    cursor = (previous or {}).get("next_cursor")
    return {"limit": 100, **({"cursor": cursor} if cursor else {})}


# What the operations at one size start from, set before they are timed (see `prepare`): cursors deep in the graph
# and in the feed, made as the gate makes them (services/reads.py), so no operation has to walk there first.
CONTEXT: dict[str, Any] = {}
REVISED, BUSY = "revised subject", "busy subject"  # 1,000 revisions; 10,000 change records
REVISIONS, RECORDS, QUARANTINED = 1_000, 10_000, 200


def _busy_write(i: int) -> dict[str, Any]:
    return {**person_item(0), "merge_keys": {"name": BUSY}, "properties": {"count": i}}


OPERATIONS = [
    Operation("write_node", "write_node", 200, lambda n, i, _: person_item(n + 10_000_000 + i)),
    Operation("write_node, 10,000 records", "write_node", 100, lambda n, i, _: _busy_write(n + i)),
    Operation("search_nodes", "search_nodes", 20, lambda n, i, _: {"query": f"topic {(i * 13) % 997} ", "limit": 20}),
    Operation("search_nodes, no match", "search_nodes", 20, lambda n, i, _: {"query": f"zq{i}x", "limit": 20}),
    Operation(
        "search_nodes, memory", "search_nodes", 20, lambda n, i, _: {"query": f"topic {(i * 13) % 997} "}, "memory"
    ),
    # Ranked: one node's name (its words are person and 0004242: the number is unique), and a phrase 0.1% hold.
    Operation("ranked, a name", "search_nodes_ranked", 20, lambda n, i, _: {"query": f"{(i * 7919) % n:07d}"}),
    Operation("ranked, a phrase", "search_nodes_ranked", 20, lambda n, i, _: {"query": f'"topic {(i * 13) % 997}"'}),
    Operation("open_nodes", "open_nodes", 100, lambda n, i, _: {"names": [person((i * 7919) % n)]}),
    Operation("read_graph page", "read_graph", 30, lambda n, i, previous: _next_page(previous)),
    Operation("read_graph page, deep", "read_graph", 30, lambda n, i, _: {"limit": 100, "cursor": CONTEXT["deep"]}),
    Operation("changes_since, oldest", "changes_since", 20, lambda n, i, _: {"limit": 50}),
    Operation("changes_since, deep", "changes_since", 20, lambda n, i, _: {"limit": 50, "cursor": CONTEXT["feed"]}),
    Operation("changes_since, head", "changes_since", 20, lambda n, i, _: {"limit": 50, "cursor": CONTEXT["head"]}),
    Operation(
        "get_history, 1,000 revisions",
        "get_history",
        20,
        lambda n, i, _: {"label": "Person", "merge_keys": {"name": REVISED}},
    ),
    Operation("list_quarantine", "list_quarantine", 20, lambda n, i, _: {"limit": 50}),
    Operation("get_graph_stats", "get_graph_stats", 3, lambda n, i, _: {}),
]
# Measured from the ingest itself: the batch calls that grew the graph to each size, per item.
INGEST = ("write_nodes per item", "write_relationships per item")
# Measured once per size, in seconds: a walk of every node by read_graph pages of 1,000, and export_graph (json);
# up to WHOLE_MAX nodes (each costs about a millisecond a node on this machine, most of it reading the engine's
# answers in Python: at a million, half an hour for the two).
WHOLE = ("read_graph walk", "export_graph")
WHOLE_MAX = 1_000_000


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


async def time_operation(clients: dict[str, Client], operation: Operation, nodes: int) -> float:
    """Median milliseconds of `operation` on a graph of `nodes`, after one untimed call."""
    client = clients[operation.profile]
    previous = await _call(client, operation.tool, operation.args(nodes, 0, None))
    samples = []
    for i in range(1, operation.calls + 1):
        started = time.perf_counter()
        previous = await _call(client, operation.tool, operation.args(nodes, i, previous))
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


async def subjects(client: Client) -> None:
    """The aged subjects: one node written REVISIONS times, one RECORDS times; and QUARANTINED refused writes."""
    for i in range(REVISIONS):
        await _call(client, "write_node", {**person_item(0), "merge_keys": {"name": REVISED}, "properties": {"n": i}})
    for i in range(RECORDS):
        await _call(client, "write_node", _busy_write(i))
    for i in range(QUARANTINED):
        bad = {**person_item(i), "properties": {"age": "not a number"}}  # Person's age is an integer
        refused = await client.call_tool("write_node", bad)
        assert refused.is_error, refused.structured_content


async def prepare(client: Client, nodes: int, halfway: str) -> None:
    """CONTEXT for this size: a read_graph cursor halfway through the :Person nodes (FalkorDB pages by engine
    id; ids run as the nodes were made), a feed cursor at the moment the graph was half this size, and one at
    the head (what a poller that keeps up holds)."""
    CONTEXT["deep"] = encode_cursor("read", l="Person", a=nodes // 2)
    CONTEXT["feed"] = encode_cursor("changes", s=halfway, c="")
    CONTEXT["head"] = encode_cursor("changes", s=utc_now(), c="")


async def settle(gate: Gate) -> float:
    """Seconds until the statistics and the agent tallies hold everything written (the keeper's work, done here
    alongside it: a fold another took first is skipped)."""
    started = time.perf_counter()
    labels, types = gate.registry.all_canonical_labels(), gate.registry.all_relationship_types()
    while not await agent_tallies.fold(gate.backend, settle_seconds=1.0, pages=100):
        pass
    while await stat_counts.fold(gate.backend, labels, types):
        pass
    return time.perf_counter() - started


async def whole(client: Client) -> dict[str, float]:
    """Seconds to walk every node by read_graph pages of 1,000, and to export the graph as json."""
    started, cursor, seen = time.perf_counter(), None, 0
    while True:
        page = await _call(client, "read_graph", {"limit": 1000, **({"cursor": cursor} if cursor else {})})
        seen += len(page["entities"])
        if (cursor := page.get("next_cursor")) is None:
            break
    walk = time.perf_counter() - started
    started = time.perf_counter()
    exported = await _call(client, "export_graph", {"format": "json"})
    assert exported["entities"] >= seen - 1, (exported["entities"], seen)
    return {WHOLE[0]: walk, WHOLE[1]: time.perf_counter() - started}


async def scale(sizes: list[int], log: Callable[[str], None] = print) -> dict[str, Any]:
    """Grow one graph through each size in turn and measure at each; returns the points for the report."""
    data_dir = Path(tempfile.mkdtemp(prefix="wg-scale-"))
    # The limit off: the whole export is timed as one call, past the 10 s a served read call is held to.
    settings = Settings(data_dir=data_dir, query_timeout_seconds=120, toolsets="all", call_limit_seconds=0)
    points = []
    try:
        server = build_server(settings)
        async with (
            Client(server) as client,
            Client(build_server(settings, profile="memory", auto_migrate=False)) as memory_client,
        ):
            clients = {"gate": client, "memory": memory_client}
            await subjects(client)
            nodes, ingest_s = 0, 0.0
            for size in sorted(sizes):
                started = time.perf_counter()
                halfway_nodes = nodes + (size - nodes) // 2
                costs = await grow(client, nodes, halfway_nodes)
                halfway = utc_now()
                later = await grow(client, halfway_nodes, size)
                costs = {name: (costs[name] + later[name]) / 2 for name in costs}
                nodes, ingest_s = size, ingest_s + time.perf_counter() - started
                await prepare(client, nodes, halfway)
                settle_s = await settle(server.services.gate)
                ops = {**costs, **{op.name: await time_operation(clients, op, nodes) for op in OPERATIONS}}
                walls = await whole(client) if nodes <= WHOLE_MAX else {}
                load = os.getloadavg()[0]  # the machine's: a shared one's load is part of every figure
                point = {
                    "nodes": nodes,
                    "ingest_s": ingest_s,
                    "settle_s": settle_s,
                    "ops_ms": ops,
                    "whole_s": walls,
                    "load": load,
                    **memory(data_dir),
                }
                points.append(point)
                log(
                    f"scale {nodes:>9,} nodes (ingested in {ingest_s:,.0f} s, settled in {settle_s:,.0f} s): "
                    + ", ".join(f"{name} {ms:.2f} ms" for name, ms in ops.items())
                    + ", "
                    + ", ".join(f"{name} {s:.1f} s" for name, s in walls.items())
                    + f"; engine {point['engine_mib']:,.0f} MiB, gate {point['gate_mib']:,.0f} MiB, "
                    f"disk {point['disk_mib']:,.0f} MiB"
                )
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    return {"operations": [*INGEST, *(op.name for op in OPERATIONS)], "whole": list(WHOLE), "points": points}


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
    """One row per operation, one column per size, and the growth from the smallest size to the largest."""
    points = results["points"]
    sizes = " | ".join(f"{p['nodes']:,}" for p in points)
    lines = [f"| operation (median) | {sizes} | growth |", "|---|" + "---|" * (len(points) + 1)]

    def row(name: str, values: list[float], unit: str) -> str:
        shown = " | ".join(f"{v:.2f} {unit}" for v in values)
        growth = f"{values[-1] / values[0]:.2f}x" if values and values[0] > 0 else ""
        return f"| {name} | {shown} | {growth} |"

    for name in results["operations"]:
        lines.append(row(name, [p["ops_ms"][name] for p in points], "ms"))
    for name in results.get("whole", []):
        walked = [p for p in points if name in p.get("whole_s", {})]
        shown = " | ".join(f"{p['whole_s'][name]:.1f} s" if p in walked else "not measured" for p in points)
        growth = f"{walked[-1]['whole_s'][name] / walked[0]['whole_s'][name]:.2f}x" if len(walked) > 1 else ""
        lines.append(f"| {name} (whole graph) | {shown} | {growth} |")
    for key, label in (("engine_mib", "engine RSS"), ("gate_mib", "gate RSS"), ("disk_mib", "on disk")):
        lines.append(row(label, [p[key] for p in points], "MiB"))
    lines.append("| ingest time | " + " | ".join(f"{p['ingest_s']:,.0f} s" for p in points) + " | |")
    if all("settle_s" in p for p in points):  # the keeper's catch-up after the ingest, before the calls are timed
        lines.append("| keeper catch-up | " + " | ".join(f"{p['settle_s']:,.0f} s" for p in points) + " | |")
    lines.append("| load (1 min) | " + " | ".join(f"{p.get('load', 0):.1f}" for p in points) + " | |")
    return lines

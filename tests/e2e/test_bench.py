"""The benchmark harness runs: every script in bench/ at a tiny size, so a change that breaks one fails here
rather than on the day someone measures. Figures are printed by the scripts, never asserted.

A tiny size hides what only grows with the graph: a statement that scans every node of a label once per row of
its UNWIND runs fast at 100 nodes and never ends at 100,000 (issue 26, item 7: the reads section linked 50,000
pairs by an unindexed `name`). So each section of bench/run.py also runs with every statement it sends explained
by the engine first, and no plan may scan a label (or every node) per row: a scan under an `Argument` is one.
That holds at any size, so the tiny run meets the failure the full one would."""

import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from mcp import Client

from write_gate.core.cypher.statement import Statement
from write_gate.engines.falkordb import FalkorDBBackend
from write_gate.services import stat_counts
from write_gate.serving.config import Settings
from write_gate.surface.server import build_server

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
WRITE_GATE = Path(sys.executable).parent / "write-gate"


def bench_module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


UNMEASURED_BY = ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START", "SUITE_COVERAGE_AFTER_IMPORTS")


def run_script(name: str, *args: str) -> str:
    # Unmeasured: a script (and the servers it starts) runs what the tests measure already, and coverage would
    # slow its every call 2-3x for nothing (the variables coverage's subprocess hooks read: its own .pth file's, and
    # tests/coverage_startup's).
    unmeasured = {k: v for k, v in os.environ.items() if k not in UNMEASURED_BY}
    # A long query timeout: a script's engine shares the machine with the whole suite, and a slow statement there
    # (a CREATE INDEX past 10 s once in CI) is not what a benchmark is for; test_engine_down covers timeouts.
    env = {**unmeasured, "PYTHONPATH": str(BENCH), "WRITE_GATE_QUERY_TIMEOUT_SECONDS": "120"}
    result = subprocess.run(
        [sys.executable, str(BENCH / f"{name}.py"), *args], capture_output=True, text=True, timeout=600, env=env
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def per_row_scans(plan: str) -> list[str]:
    """The scans of a FalkorDB plan that run once per incoming row: a label (or all-node) scan fed by an
    `Argument` (the operation that hands it each row of what came before), where those rows are more than one
    (not an aggregation's, nor a projection of nothing's)."""
    lines = [(len(line) - len(line.lstrip()), line.strip()) for line in plan.splitlines() if line.strip()]
    parent: dict[int, int] = {}
    stack: list[int] = []
    for i, (depth, _) in enumerate(lines):
        while stack and lines[stack[-1]][0] >= depth:
            stack.pop()
        if stack:
            parent[i] = stack[-1]
        stack.append(i)
    children: dict[int, list[int]] = {}
    for child, up in parent.items():
        children.setdefault(up, []).append(child)

    def below(i: int) -> list[int]:
        return [j for c in children.get(i, []) for j in (c, *below(c))]

    def one_row(i: int) -> bool:
        """Whether the operations at `i` hand on one row: an aggregation, or a projection of nothing, under
        operations that only pass rows on."""
        name, kids = lines[i][1], children.get(i, [])
        if name.startswith("Aggregate"):
            return True
        if not kids:
            return name.startswith("Project")
        passing = name.startswith(("Project", "Filter", "Sort", "Limit", "Skip", "Distinct"))
        return passing and len(kids) == 1 and one_row(kids[0])

    found = []
    for i, (_, name) in enumerate(lines):
        scan = "Label Scan" in name or "All Node Scan" in name
        if not scan or not any(lines[j][1].startswith("Argument") for j in below(i)):
            continue
        node = i
        while node in parent:  # up to the operation whose first child feeds the rows: what kind of rows
            up = parent[node]
            first = children[up][0]
            if first != node and node not in below(first):
                if not one_row(first):
                    found.append(name)
                break
            node = up
    return found


class ExplainedFirst:
    """Every statement with an UNWIND a FalkorDB backend sends, explained by its engine (the same graph, with its
    indexes) before it runs; the distinct plans that scan per row are kept."""

    def __init__(self) -> None:
        self.explained: set[str] = set()
        self.scanning: dict[str, list[str]] = {}

    def wrap(self, run: Any) -> Any:
        async def explained_first(backend: FalkorDBBackend, statement: Statement, read_only: bool) -> Any:
            if "UNWIND" in statement.text and statement.text not in self.explained:
                self.explained.add(statement.text)
                _db, graph = await backend._connected()  # noqa: SLF001 - the engine's own plan of the statement
                plan = str(await graph.explain(statement.text, dict(statement.params)))
                if scans := per_row_scans(plan):
                    self.scanning[statement.text] = scans
            return await run(backend, statement, read_only)

        return explained_first


@pytest.fixture
def explained(monkeypatch: pytest.MonkeyPatch) -> Iterator[ExplainedFirst]:
    watch = ExplainedFirst()
    monkeypatch.setattr(FalkorDBBackend, "_run", watch.wrap(FalkorDBBackend._run))  # noqa: SLF001
    yield watch


def test_a_plan_that_scans_per_row_is_found() -> None:
    """The plan FalkorDB gave the reads section's old link statement (`name`, unindexed), and the one it gives
    now (`_key`)."""
    old = (
        "Create\n    Apply\n        Unwind\n        Cartesian Product\n            Filter\n"
        "                Node By Label Scan | (a:Person)\n                    Argument\n"
        "            Filter\n                Node By Label Scan | (b:Person)\n                    Argument"
    )
    new = (
        "Create\n    Apply\n        Unwind\n        Cartesian Product\n"
        "            Node By Index Scan | (a:Person)\n                Argument\n"
        "            Node By Index Scan | (b:Person)\n                Argument"
    )
    search = "Results\n    Project\n        Filter\n            Node By Label Scan | (n:Person)"
    # A MERGE after an aggregation (the schema load's registry version) is fed one row.
    once = (
        "Results\n    Merge\n        Aggregate\n            Unwind\n"
        "        Node By Label Scan | (v:WriteGateRegistry)\n            Argument\n"
        "        MergeCreate\n            Argument"
    )
    # The memory profile's search: each label's OPTIONAL MATCH fed the one row gathered so far.
    gathered = (
        "Results\n    Aggregate\n        Apply\n            Project\n            Optional\n"
        "                Filter\n                    Node By Label Scan | (x0:Document)\n"
        "                        Argument"
    )
    assert per_row_scans(old) == ["Node By Label Scan | (a:Person)", "Node By Label Scan | (b:Person)"]
    assert per_row_scans(new) == per_row_scans(search) == per_row_scans(once) == per_row_scans(gathered) == []


async def test_every_section_sends_no_statement_that_scans_a_label_per_row(
    monkeypatch: pytest.MonkeyPatch, explained: ExplainedFirst, tmp_path: Path
) -> None:
    """Sections 1, 2 and 4 of bench/run.py as they run, and section 3's workload on the memory profile in process
    (the script runs it over stdio against `write-gate serve --profile memory`, and the official server from npm:
    `run.py --quick`). Section 5 is checked at its tiny sizes below."""
    pytest.importorskip("psutil", reason="bench/run.py needs the bench group's psutil")
    monkeypatch.syspath_prepend(str(BENCH))  # run.py imports bench/scale.py, as it does run as a script
    run = bench_module("run")
    await run.gate_overhead(20)
    await run.batch_ingest(1500, rounds=1)  # two chunks: the pipeline runs, and the raw side is built alike
    await run.reads_at_scale(200)
    assert run.RESULTS["batch"]["items"] == 1500
    assert run.RESULTS["overhead"]["calls"] == 20
    assert run.RESULTS["reads"]["nodes"] == 200
    settings = Settings(data_dir=tmp_path / "e2e")
    async with Client(build_server(settings, profile="memory")) as client:
        await run.workload(client, 60, "gate", [])
    assert len(explained.explained) >= 3, explained.explained  # the batches, the links, the memory tools' lookups
    assert explained.scanning == {}


async def test_scale_section_at_tiny_sizes(
    monkeypatch: pytest.MonkeyPatch, explained: ExplainedFirst, tmp_path: Path
) -> None:
    """Section 5 (`run.py --only-scale --sizes ...`): the graph grown through the batch tools, every operation
    timed and the server's memory read at each size, the plot and the table drawn from the points; no statement
    it sends scans a label per row."""
    monkeypatch.syspath_prepend(str(BENCH))
    scale = bench_module("scale")
    monkeypatch.setattr(scale, "REVISIONS", 5)  # the aged subjects, small: here the sections run, no more
    monkeypatch.setattr(scale, "RECORDS", 5)
    monkeypatch.setattr(scale, "QUARANTINED", 3)
    # Each operation timed twice, not 20 to 200 times: the same 13 statements with an UNWIND are explained (of 3,078
    # statements sent, 630 are), in a fifth of the time.
    monkeypatch.setattr(scale, "OPERATIONS", [replace(op, calls=min(op.calls, 2)) for op in scale.OPERATIONS])
    results = await scale.scale([150, 300])
    assert explained.scanning == {}
    assert [p["nodes"] for p in results["points"]] == [150, 300]
    for point in results["points"]:
        assert set(point["ops_ms"]) == set(results["operations"])
        assert set(point["whole_s"]) == set(results["whole"])
        assert point["engine_mib"] > 0  # the engine process was found
        assert point["settle_s"] >= 0  # the keeper's work was done before the calls were timed
    table = scale.report_lines(results)
    assert table[0].startswith("| operation (median) | 150 | 300 | growth |")
    assert any(line.startswith("| read_graph walk (whole graph) |") for line in table)
    assert any(line.startswith("| keeper catch-up |") for line in table)
    try:
        import matplotlib  # noqa: F401 - the bench group's
    except ImportError:
        return
    scale.plot(results, tmp_path / "scale.png")
    assert (tmp_path / "scale.png").stat().st_size > 0


async def test_the_scale_bench_times_calls_once_the_statistics_hold_every_write(
    monkeypatch: pytest.MonkeyPatch, settings: Settings
) -> None:
    """`scale.settle`: with the keeper off and a fold of 10 subjects a chunk, 45 written nodes are all folded."""
    monkeypatch.syspath_prepend(str(BENCH))
    scale = bench_module("scale")
    monkeypatch.setattr(stat_counts, "CHUNK", 10)
    server = build_server(settings.model_copy(update={"stats_fold_seconds": 0}))
    due = Statement("MATCH (n:Person) WHERE n._due = 1 RETURN count(n) AS n")
    async with Client(server) as client:
        answer = await client.call_tool("write_nodes", {"items": [scale.person_item(i) for i in range(45)]})
        assert not answer.is_error, answer.structured_content
        gate = server.services.gate
        assert (await gate.backend.read(due))[0]["n"] == 45
        assert await scale.settle(gate) >= 0
        assert (await gate.backend.read(due))[0]["n"] == 0


@pytest.mark.parametrize(
    ("script", "args", "says"),
    [
        ("write_node_latency", ("--calls", "5"), "median"),
        ("write_cost", ("--calls", "5", "--properties", "2"), "of plain"),
        ("read_latency", ("--nodes", "200", "--calls", "3"), "search_nodes"),
        ("typed_links", ("--calls", "2"), "100"),
        ("http_sessions", ("--sessions", "3", "--idle", "0.5", "--settle", "0.1"), "sessions"),
        # A baseline build (this one again) called in turn with it; HTTP's sessions are http_sessions' own.
        (
            "profile_calls",
            ("--entities", "20", "--calls", "3", "--transport", "stdio", "--baseline", str(WRITE_GATE)),
            "baseline",
        ),
        ("ab_builds", ("--before", str(ROOT), "--calls", "2", "--nodes", "2", "--grow", "3"), "grown by 3"),
        ("batch_versions", ("--base", "HEAD", "--items", "50", "--rounds", "1"), "nodes/s"),
        ("ranked_search", ("--sizes", "300", "--calls", "2"), "search_nodes_ranked"),
        ("mesh_search", ("--sizes", "300", "--calls", "2"), "'Role: Wizard'"),
        ("search_eval", ("--questions", "3"), "median latency per call"),
        ("embeddings", ("--calls", "3", "--nodes", "300", "--searches", "2"), "hybrid"),
        ("graph_stats", ("--nodes", "300", "--runs", "2"), "get_graph_stats over 300 nodes"),
        (
            "export_formats",
            ("--nodes", "50", "--relations", "100", "--calls", "1", "--formats", "dot,prov-turtle"),
            "prov-turtle",
        ),
        ("backup_restore", ("--nodes", "50", "--relationships", "80"), "restore:"),
        ("spaces_cost", ("--spaces", "1", "2"), "growth per added space"),
        ("change_feed", ("--changes", "120"), "watcher poll"),
        ("tool_lists", ("--only", "gate profile"), "| gate profile | 9 |"),
        ("delete_entities", ("--sizes", "20"), "per entity"),
        ("crowd", ("--nodes", "300", "--seconds", "1", "--only", "open_nodes,search_nodes"), "victim p50"),
        ("fleet", ("--agents", "1", "--calls", "3", "--only", "floor-json,gate-json"), "gate-json refused at 1 agents"),
        (
            "fleet",
            ("--client", "light", "--agents", "1", "--calls", "3", "--only", "floor-json,workers-1,workers-2"),
            "--workers 2, write_node at 1 agents",
        ),
    ],
)
def test_script_runs(script: str, args: tuple[str, ...], says: str) -> None:
    assert says in run_script(script, *args)

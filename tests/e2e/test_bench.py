"""The benchmark harness runs: every script in bench/ at a tiny size, so a change that breaks one fails here
rather than on the day someone measures. Figures are printed by the scripts, never asserted."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

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


def run_script(name: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(BENCH)}
    result = subprocess.run(
        [sys.executable, str(BENCH / f"{name}.py"), *args], capture_output=True, text=True, timeout=600, env=env
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


async def test_run_sections_without_npm(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sections 1, 2 and 4 of bench/run.py (section 3 installs the official server from npm: `run.py --quick`)."""
    pytest.importorskip("psutil", reason="bench/run.py needs the bench group's psutil")
    monkeypatch.syspath_prepend(str(BENCH))  # run.py imports bench/scale.py, as it does run as a script
    run = bench_module("run")
    await run.gate_overhead(20)
    await run.batch_ingest(1500, rounds=1)  # two chunks: the pipeline runs, and the raw side is built alike
    await run.reads_at_scale(100)
    assert run.RESULTS["batch"]["items"] == 1500
    assert run.RESULTS["overhead"]["calls"] == 20
    assert run.RESULTS["reads"]["nodes"] == 100


async def test_scale_section_at_tiny_sizes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Section 5 (`run.py --only-scale --sizes ...`): the graph grown through the batch tools, every operation
    timed and the server's memory read at each size, the plot and the table drawn from the points."""
    monkeypatch.syspath_prepend(str(BENCH))
    scale = bench_module("scale")
    results = await scale.scale([150, 300])
    assert [p["nodes"] for p in results["points"]] == [150, 300]
    for point in results["points"]:
        assert set(point["ops_ms"]) == set(results["operations"])
        assert point["engine_mib"] > 0  # the engine process was found
    assert scale.report_lines(results)[-1].startswith("| 300 |")
    try:
        import matplotlib  # noqa: F401 - the bench group's
    except ImportError:
        return
    scale.plot(results, tmp_path / "scale.png")
    assert (tmp_path / "scale.png").stat().st_size > 0


@pytest.mark.parametrize(
    ("script", "args", "says"),
    [
        ("write_node_latency", ("--calls", "5"), "median"),
        ("write_cost", ("--calls", "5", "--properties", "2"), "of plain"),
        ("read_latency", ("--nodes", "200", "--calls", "3"), "search_nodes"),
        ("typed_links", ("--calls", "2"), "100"),
        ("http_sessions", ("--sessions", "3", "--idle", "1"), "sessions"),
        # Both transports, and a baseline build (this one again) called in turn with it.
        ("profile_calls", ("--entities", "20", "--calls", "3", "--baseline", str(WRITE_GATE)), "baseline"),
        ("batch_versions", ("--base", "HEAD", "--items", "50", "--rounds", "1"), "nodes/s"),
        ("ranked_search", ("--sizes", "300", "--calls", "2"), "search_nodes_ranked"),
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
    ],
)
def test_script_runs(script: str, args: tuple[str, ...], says: str) -> None:
    assert says in run_script(script, *args)

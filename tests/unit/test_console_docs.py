"""docs/operations/console.md and docs/operations/observability.md say what the code does: their command lines
parse as the CLI parses them, and the metrics table names exactly the metrics a server exposes."""

import re
import shlex
from pathlib import Path

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e import readme_blocks
from write_gate.cli import parser
from write_gate.serving.telemetry import Metrics

DOCS = Path(__file__).parents[2] / "docs" / "operations"
# The pages' command blocks, by their markers (tests/e2e/test_readme.py's RUN names this test for each).
COMMANDS = {
    "add-operator": "console:add-operator",
    "console-command": "console:console-command",
    "scraper": "observability:scraper",
    "stdio": "observability:stdio",
}


def test_the_pages_command_lines_are_the_clis() -> None:
    found = {name: readme_blocks.block(key).text.strip() for name, key in COMMANDS.items()}
    for line in found.values():
        words = shlex.split(line)
        assert words[0] == "write-gate"
        parser().parse_args(words[1:])  # exits (fails the test) on a line the CLI refuses
    assert parser().parse_args(shlex.split(found["stdio"])[1:]).metrics_port == 9464
    assert parser().parse_args(shlex.split(found["scraper"])[1:]).tools == ["metrics"]


def test_the_metrics_table_names_every_metric_and_no_other() -> None:
    metrics = Metrics()
    metrics.call("write_node", "a", 0.01, True, "RATE_LIMITED", True)  # every labelled family has a sample now
    metrics.statements.labels("read", "ok").inc()
    metrics.statement_seconds.labels("read").observe(0.001)
    for gauge in (metrics.quarantine, metrics.open_conflicts, metrics.registry_version):
        gauge.labels("main").set(0)
    text = generate_latest(metrics.registry).decode()
    # prometheus_client adds a `<name>_created` family beside each counter and histogram: the time it began.
    exposed = {f.name for f in text_string_to_metric_families(text) if not f.name.endswith("_created")}
    counters = {"write_gate_tool_calls", "write_gate_engine_statements", "write_gate_idempotent_replays"}
    counters |= {"write_gate_rate_limit_refusals", "write_gate_held_back_calls"}
    exposed = {name + "_total" if name in counters else name for name in exposed}  # as the samples are named
    table = (DOCS / "observability.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `(write_gate_\w+)`", table, re.M))
    assert documented == exposed

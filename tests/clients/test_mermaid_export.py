"""The mermaid export parses with Mermaid's own parser (mermaid in Node, jsdom for its DOM: no browser), text that
needs escaping included; a broken diagram does not, so the check can fail. Skips where node or npm is missing."""

import json
import subprocess

from tests.clients.conftest import node_project
from tests.unit.test_export_formats import sample
from write_gate.core.export_records import ExportedGraph
from write_gate.interchange.exports import render


def parse(diagram: str) -> dict:
    project = node_project("mermaid")
    done = subprocess.run(
        ["node", "check.mjs"], cwd=project, input=diagram, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_mermaid_export_parses_as_a_flowchart() -> None:
    for graph in (sample(), ExportedGraph()):
        assert parse(render("mermaid", graph)) == {"ok": True, "type": "flowchart-v2"}


def test_a_label_with_a_raw_quote_does_not_parse() -> None:
    assert parse('graph LR\n  n0["a "quoted" name"]\n')["ok"] is False

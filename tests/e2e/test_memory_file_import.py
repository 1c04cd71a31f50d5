"""An official memory server's file imported in process (interchange/transfer, what `write-gate import FILE` runs) on
every engine tier: entities before relations in batches, a line per outcome (created, skipped, remapped, rejected),
a dry run that decides all and writes nothing. The command itself, as a user runs it, is test_import_export's."""

import json

import pytest

from tests.conftest import open_client
from write_gate.access.agents import Agent
from write_gate.core.cypher.statement import Statement
from write_gate.interchange.formats import parse_memory_file
from write_gate.interchange.transfer import ImportReport, import_lines
from write_gate.services.memory import MemoryService, WriterContext
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import Settings
from write_gate.serving.spaces import open_space_gate

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

LINES = [
    {"type": "entity", "name": "Ada", "entityType": "person", "observations": ["wrote the first program"]},
    {"type": "entity", "name": "Analytical Engine", "entityType": "project", "observations": []},
    {"type": "entity", "name": "Ada", "entityType": "person", "observations": []},  # a repeat: skipped
    {"type": "relation", "from": "Ada", "to": "Analytical Engine", "relationType": "WORKS_ON"},
    {"type": "relation", "from": "Ada", "to": "Nobody", "relationType": "WORKS_ON"},  # no such endpoint
    {"type": "relation", "from": "Ada", "to": "Analytical Engine", "relationType": "DIRECTED"},  # unregistered
]
WRITER = WriterContext(source="import:memory.jsonl", extraction_method="parsed", reliability=0.5)


async def run_import(
    settings: Settings, *, dry_run: bool, batch_size: int = 2, space: str | None = None
) -> ImportReport:
    text = "".join(json.dumps(line) + "\n" for line in LINES)
    async with open_space_gate(settings, space, auto_migrate=True) as gate:
        items = list(parse_memory_file(text))
        return await import_lines(
            MemoryService(gate), items, WRITER, Agent("importer"), batch_size=batch_size, dry_run=dry_run
        )


async def test_a_file_imports_line_by_line_with_each_outcome(settings: Settings) -> None:
    dry = await run_import(settings, dry_run=True)
    report = await run_import(settings, dry_run=False)
    assert dry.counts == report.counts  # a dry run decides what the import then does
    assert report.counts["entity created"] == 2 and report.counts["entity skipped"] == 1
    assert report.counts["relation created"] == 1 and report.counts["relation rejected"] == 2
    assert sorted((r["line"], r["error_code"]) for r in report.rejected) == [
        (5, "ENDPOINT_NOT_FOUND"),
        (6, "SCHEMA_UNKNOWN_LABEL"),
    ]
    assert {(r["line"], r["to"]) for r in report.remapped} >= {(1, "Person"), (2, "Project")}
    async with open_client(settings, "in_process", profile="memory") as client:
        graph = json.loads((await client.call_tool("read_graph", {})).content[0].text)
    assert sorted(e["name"] for e in graph["entities"]) == ["Ada", "Analytical Engine"]
    assert [(r["from"], r["to"], r["relationType"]) for r in graph["relations"]] == [
        ("Ada", "Analytical Engine", "WORKS_ON")
    ]
    again = await run_import(settings, dry_run=False, batch_size=500)  # one batch, every line known: all skipped
    assert again.counts["entity skipped"] == 3 and again.counts["relation skipped"] == 1


async def test_a_file_imported_into_a_space_takes_the_registry_the_default_space_holds(settings: Settings) -> None:
    """`import --space team_b` with the registry shared: the registry is read from the default space's graph, and
    every line is written in team_b's graph alone."""
    spaced = settings.model_copy(update={"spaces": ["main", "team_b"], "default_space": "main"})
    async with open_space_gate(spaced, None, auto_migrate=True):
        pass  # the default space migrated first: it holds the registry
    report = await run_import(spaced, dry_run=False, space="team_b")
    assert report.counts["entity created"] == 2 and report.counts["relation created"] == 1
    for space, names in (("team_b", ["Ada", "Analytical Engine"]), ("main", [])):
        backend = await open_backend(spaced.for_space(space))  # the space's own graph, read past the gate
        try:
            rows = await backend.read(Statement("MATCH (n) WHERE n:Person OR n:Project RETURN n.name AS name"))
        finally:
            await backend.close()
        assert sorted(row["name"] for row in rows) == names, space

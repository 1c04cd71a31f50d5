"""`write-gate import FILE` without `--format` (issue 26, item 2), through the CLI's own `main` in process
(tests/conftest.py's run_write_gate): the file's content tells its kind. The gate's own jsonl export round-trips
losslessly (ids, labels, keys, from_id/to_id, tags, importance, properties, weights: two nodes of one name under two
labels stay two); memory-mcp's lines keep their tags and importance; the official server's lines take the official
path as before. The kind is decided above the engine, and the import's statements run on every tier in
test_import_strategies.py: these command tests run on one."""

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TESTS, CommandRun, ok, open_client, run_write_gate, settings_env
from write_gate.engines import GraphBackend
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = pytest.mark.anyio

EXPORTS = TESTS / "schemas" / "exports"
PROV = {"source": "wiki", "extraction_method": "manual", "reliability": 0.8}
# Every value kind a property may hold: text, integer, float, boolean, lists of each.
ADA = {
    "born": 1815,
    "height": 1.65,
    "countess": True,
    "languages": ["English", "French"],
    "scores": [1, 2, 3],
    "ratios": [0.5, 0.25],
    "flags": [True, False],
    "motto": "That brain of mine is something more than merely mortal",
}
# What an export must carry back after an import, per record (provenance and times are the import's own).
ENTITY_FIELDS = ("id", "label", "keys", "name", "entityType", "observations", "tags", "importance", "properties")
RELATION_FIELDS = ("from", "to", "from_id", "to_id", "relationType", "weight", "properties")


def cli(settings: Settings, *args: str) -> CommandRun:
    """`write-gate ARGS`, in process."""
    return run_write_gate(*args, env=settings_env(settings))


async def exported(settings: Settings) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The graph's jsonl export (the export_graph tool's), as entity and relation records, in the export's order."""
    async with open_client(settings, "in_process") as client:
        content = (await ok(client, "export_graph", {"format": "jsonl"}))["content"]
    records = [json.loads(line) for line in content.splitlines() if line.strip()]
    return [r for r in records if r["type"] == "entity"], [r for r in records if r["type"] == "relation"]


def kept(records: list[dict[str, Any]], fields: tuple[str, ...]) -> list[dict[str, Any]]:
    return sorted(({field: r.get(field) for field in fields} for r in records), key=json.dumps)


async def fresh_graph(settings: Settings, name: str) -> Settings:
    """Another empty graph on the same engine, with the same registry."""
    other = settings.model_copy(update={"graph_name": name})
    if other.memgraph_database:  # the Bolt tier: a database per graph
        other = other.model_copy(update={"memgraph_database": name})
    backend = await open_backend(other)
    try:
        await load_into_graph(backend, read_sources([EXPORTS]))
    finally:
        await backend.close()
    return other


@pytest.fixture
async def registry(graph: GraphBackend) -> GraphBackend:
    await load_into_graph(graph, read_sources([EXPORTS]))
    return graph


async def test_the_gates_own_jsonl_export_round_trips_through_the_plain_import(
    settings: Settings, registry: GraphBackend, tmp_path: Path
) -> None:
    async with open_client(settings, "in_process") as client:
        for label, name, properties in (("Person", "Mercury", {}), ("Project", "Mercury", {}), ("Person", "Ada", ADA)):
            await ok(
                client, "write_node", {"label": label, "merge_keys": {"name": name}, "properties": properties, **PROV}
            )
        await ok(client, "add_tags", {"entityName": "Ada", "tags": ["pioneer", "math"]})
        await ok(client, "set_importance", {"entityName": "Ada", "importance": 9})
        works_on = {"type": "WORKS_ON", "from_label": "Person", "to_label": "Project", "to_keys": {"name": "Mercury"}}
        await ok(
            client,
            "write_relationship",
            {
                **works_on,
                "from_keys": {"name": "Mercury"},
                "properties": {"role": "lead", "hours": 12},
                "weight": 0.7,
                **PROV,
            },
        )
        await ok(client, "write_relationship", {**works_on, "from_keys": {"name": "Ada"}, **PROV})
    entities, relations = await exported(settings)
    assert len(entities) == 3 and len(relations) == 2
    export = tmp_path / "graph.jsonl"
    export.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in entities + relations), encoding="utf-8")

    target = await fresh_graph(settings, settings.graph_name + "_copy")
    done = cli(target, "import", str(export))
    assert done.returncode == 0, done.stderr
    assert "is the gate's export: imported as --format jsonl" in done.stderr
    again, again_relations = await exported(target)
    assert kept(again, ENTITY_FIELDS) == kept(entities, ENTITY_FIELDS)
    assert kept(again_relations, RELATION_FIELDS) == kept(relations, RELATION_FIELDS)
    ada = next(e for e in again if e["name"] == "Ada")
    assert (ada["properties"], ada["tags"], ada["importance"]) == (ADA, ["pioneer", "math"], 9)
    assert sorted(r["weight"] for r in again_relations) == [0.7, 1.0]


async def test_memory_mcps_lines_keep_their_tags_and_importance_and_the_official_lines_take_the_official_path(
    settings: Settings, registry: GraphBackend, tmp_path: Path
) -> None:
    memory_mcp = tmp_path / "memory-mcp.jsonl"
    ada = {"type": "entity", "name": "Ada", "entityType": "Person", "observations": ["wrote the first program"]}
    ada |= {"tags": ["Pioneer"], "importance": 8, "createdAt": "2024-01-01T00:00:00Z", "lastModified": "2024-01-02"}
    engine = {"type": "entity", "name": "Engine", "entityType": "Project", "observations": [], "parentId": None}
    works = {"type": "relation", "from": "Ada", "to": "Engine", "relationType": "WORKS_ON", "createdAt": "2024-01-01"}
    lines = [ada, engine, works]
    memory_mcp.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    done = cli(settings, "import", str(memory_mcp))
    assert done.returncode == 0, done.stderr
    entities, relations = await exported(settings)
    ada = next(e for e in entities if e["name"] == "Ada")
    assert (ada["tags"], ada["importance"], ada["observations"]) == (["pioneer"], 8, ["wrote the first program"])
    assert [(r["from"], r["relationType"], r["to"]) for r in relations] == [("Ada", "WORKS_ON", "Engine")]
    assert "is memory-mcp's file: imported as --format jsonl" in done.stderr

    official = tmp_path / "memory.jsonl"
    plain = [
        {"type": "entity", "name": "Grace", "entityType": "Person", "observations": ["wrote a compiler"]},
        {"type": "relation", "from": "Grace", "to": "Engine", "relationType": "WORKS_ON"},
    ]
    official.write_text("".join(json.dumps(line) + "\n" for line in plain), encoding="utf-8")
    done = cli(settings, "import", str(official))
    assert done.returncode == 0, done.stderr
    assert "imported as --format" not in done.stderr
    assert (
        "entities: 1 were created, 0 skipped (already there), 0 rejected" in done.stderr
    )  # the official path's report
    entities, relations = await exported(settings)
    grace = next(e for e in entities if e["name"] == "Grace")
    assert grace["observations"] == ["wrote a compiler"]
    assert ("Grace", "WORKS_ON", "Engine") in {(r["from"], r["relationType"], r["to"]) for r in relations}

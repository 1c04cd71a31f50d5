"""`write-gate backup` and `write-gate restore`: a graph several agents wrote (provenance, value claims, weights, a
merge and its alias, history, conflicts, the registry) comes back node by node and property by property into a
fresh graph on the same tier, and the restored gate serves at once."""

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import (
    MATRIX_SCHEMAS,
    CommandRun,
    is_bolt_tier,
    ok,
    open_client,
    rejected,
    run_write_gate,
    settings_env,
)
from write_gate.core.cypher.statement import Statement
from write_gate.core.stat_counts import STAT_LABELS, uncounted
from write_gate.engines import GraphBackend
from write_gate.interchange.backup import dump
from write_gate.services import agent_tallies
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import BackendKind, Settings
from write_gate.store.migrations import migrate
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]


def cli(settings: Settings, *args: str) -> CommandRun:
    """`write-gate ARGS`, in process."""
    return run_write_gate(*args, env=settings_env(settings))


async def fresh_graph(settings: Settings) -> Settings:
    """Another empty graph on the same engine (real Memgraph has one: it is wiped)."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    fresh = settings.model_copy(update={"graph_name": name})
    if is_bolt_tier(fresh):
        return fresh.model_copy(update={"memgraph_database": name})
    if fresh.backend is BackendKind.MEMGRAPH:
        backend = await open_backend(fresh)
        await backend.write(Statement("MATCH (n) DETACH DELETE n"))
        await backend.close()
    return fresh


async def snapshot(graph: GraphBackend) -> tuple[list[str], list[str]]:
    """Every node (labels, every property) and every relationship (type, properties, both endpoints whole), as
    sorted canonical JSON: equal snapshots are the same graph up to the engine's internal ids, and to the
    statistics' own nodes and marks, which a restore counts afresh (core/stat_counts.py)."""
    nodes = await graph.read(Statement("MATCH (n) RETURN id(n) AS id, labels(n) AS labels, properties(n) AS p"))
    nodes = [row for row in nodes if not set(row["labels"]) & set(STAT_LABELS)]
    text = {row["id"]: json.dumps([sorted(row["labels"]), uncounted(row["p"])], sort_keys=True) for row in nodes}
    rels = await graph.read(
        Statement("MATCH (a)-[r]->(b) RETURN id(a) AS a, id(b) AS b, type(r) AS t, properties(r) AS p")
    )
    links = [
        json.dumps([row["t"], uncounted(row["p"]), text[row["a"]], text[row["b"]]], sort_keys=True) for row in rels
    ]
    return sorted(text.values()), sorted(links)


PROV = {"source": "field-notes", "extraction_method": "manual", "reliability": 0.8}


def node(label: str, name: str, **properties: Any) -> dict[str, Any]:
    return {"label": label, "merge_keys": {"name": name}, "properties": properties, **PROV}


def link(type_: str, start: tuple[str, str], end: tuple[str, str], **extra: Any) -> dict[str, Any]:
    return {
        "type": type_,
        "from_label": start[0],
        "from_keys": {"name": start[1]},
        "to_label": end[0],
        "to_keys": {"name": end[1]},
        **PROV,
        **extra,
    }


async def write_as_several_agents(settings: Settings) -> None:
    async with open_client(settings.model_copy(update={"agent": "alice-bot"}), "in_process") as alice:
        await ok(alice, "write_node", node("Person", "Ada", age=36, tags=["math", "poetry"]))
        await ok(alice, "write_node", node("Organization", "Acme", url="https://acme.example"))
        await ok(alice, "write_node", node("Company", "Acmee", founded=1990))  # remapped: a breadcrumb
        await ok(alice, "write_relationship", link("WORKS_FOR", ("Person", "Ada"), ("Organization", "Acme")))
    async with open_client(settings.model_copy(update={"agent": "bob-bot"}), "in_process") as bob:
        await ok(bob, "write_node", node("Person", "Ada", age=37))  # another agent's claim: a conflict record
        await ok(bob, "write_node", node("Person", "Bob", age=41))
        weighted = link("KNOWS", ("Person", "Bob"), ("Person", "Ada"), weight=0.25, properties={"since": 2020})
        await ok(bob, "write_relationship", weighted)
        await ok(bob, "write_relationship", link("WORKS_FOR", ("Person", "Bob"), ("Organization", "Acmee")))
        merge = {
            "survivor": {"label": "Organization", "merge_keys": {"name": "Acme"}},
            "merged": [{"label": "Organization", "merge_keys": {"name": "Acmee"}}],
        }
        await ok(bob, "merge_entities", merge)  # Acmee becomes an alias of Acme
    async with open_client(settings.model_copy(update={"agent": "carol-bot"}), "in_process", "memory") as carol:
        entities = [{"name": "Grace", "entityType": "Person", "observations": ["wrote COBOL", "Ünïcødé 東京"]}]
        await ok(carol, "create_entities", {"entities": entities})
        await ok(carol, "add_observations", {"observations": [{"entityName": "Grace", "contents": ["admiral"]}]})


async def indexed(graph: GraphBackend) -> set[tuple[str, str]]:
    rows = await graph.read(Statement("CALL db.indexes() YIELD label, properties RETURN label, properties"))
    return {(row["label"], prop) for row in rows for prop in row["properties"]}


@pytest.fixture
async def written(settings: Settings, graph: GraphBackend) -> Settings:
    await migrate(graph)
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS]))
    await write_as_several_agents(settings)
    return settings


async def test_a_backup_restores_the_same_graph_which_then_serves(
    written: Settings, graph: GraphBackend, tmp_path: Path
) -> None:
    before = await snapshot(graph)
    labels = {json.loads(n)[0][0] for n in before[0] if json.loads(n)[0]}
    assert {"Schema", "WriteGateMigration", "WriteGateChange", "WriteGateConflict", "Person"} <= labels
    file = tmp_path / "graph.backup.jsonl"
    backed = cli(written, "backup", str(file))
    assert backed.returncode == 0, backed.stderr
    lines = file.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["format"] == "write-gate/backup"
    assert json.loads(lines[-1]) == {"type": "end", "nodes": len(before[0]), "relationships": len(before[1])}

    target = await fresh_graph(written)
    restored = cli(target, "restore", str(file))
    assert restored.returncode == 0, restored.stderr
    assert f"restored {len(before[0])} nodes and {len(before[1])} relationships" in restored.stderr
    backend = await open_backend(target)
    try:
        assert await snapshot(backend) == before
        if target.backend is not BackendKind.MEMGRAPH or is_bolt_tier(target):  # FalkorDB's db.indexes()
            assert await indexed(backend) == await indexed(graph)  # every index the gate reads, made again
    finally:
        await backend.close()

    async with open_client(written, "in_process") as source:
        counted_before = await ok(source, "get_graph_stats", {})
    tallied_before = await agent_tallies.current(graph, 0.0)
    async with open_client(target.model_copy(update={"agent": "dave-bot"}), "in_process") as client:
        # The statistics were left out of the file: the restored graph is counted afresh, to the same answer; the
        # agents' write tallies likewise, from the restored history.
        assert await ok(client, "get_graph_stats", {}) == counted_before
        backend = await open_backend(target)
        try:
            assert await agent_tallies.current(backend, 0.0) == tallied_before and tallied_before
        finally:
            await backend.close()
        alone = {"neighbors": False}  # each node alone, its neighbours aside
        [ada] = (await ok(client, "open_nodes", {"names": ["Ada"], **alone}))["entities"]
        assert ada["properties"]["age"] == 37
        acmee = await ok(client, "open_nodes", {"names": ["Acmee"], **alone})  # the alias still redirects
        assert [e["name"] for e in acmee["entities"]] == ["Acme"]
        history = await ok(client, "get_history", {"label": "Person", "merge_keys": {"name": "Ada"}})
        assert {c["agent"] for c in history["changes"]} == {"alice-bot", "bob-bot"}
        ranked = await ok(client, "search_nodes_ranked", {"query": "Grace"})
        assert [hit["entity"]["name"] for hit in ranked["results"]][:1] == ["Grace"]
        if target.backend is not BackendKind.MEMGRAPH or is_bolt_tier(target):  # real Memgraph may lack text search
            assert ranked["searched_by"] == "index"  # the restore made the text indexes again
        await ok(client, "write_node", node("Person", "Linus", age=55))
        [linus] = (await ok(client, "open_nodes", {"names": ["Linus"], **alone}))["entities"]
        assert linus["properties"]["written_by"] == "dave-bot"


@pytest.mark.one_tier
async def test_a_restore_refuses_a_graph_that_is_not_empty(written: Settings, tmp_path: Path) -> None:
    file = tmp_path / "graph.backup.jsonl"
    assert cli(written, "backup", str(file)).returncode == 0
    again = cli(written, "restore", str(file))
    assert again.returncode == 1
    assert "RESTORE_TARGET_NOT_EMPTY" in again.stderr


@pytest.mark.one_tier
async def test_a_restore_refuses_a_bad_file_naming_the_line_and_writes_nothing(
    settings: Settings, graph: GraphBackend, tmp_path: Path
) -> None:
    file = tmp_path / "bad.jsonl"
    header = '{"format": "write-gate/backup", "version": 1, "engine": "falkordb", "written_at": "x"}'
    good = '{"type": "node", "id": 0, "labels": ["Person"], "properties": {"name": "Ada"}}'
    dangling = '{"type": "relationship", "start": 0, "end": 3, "relationshipType": "KNOWS", "properties": {}}'
    for lines, line, reason in (
        ([header, good, dangling], 3, '"end" is not the id of a node'),
        ([header, good, "{not json"], 3, "not valid JSON"),
        ([header.replace("1,", "2,"), good], 1, "version 2"),
        ([header, good], 3, "cut short"),
        ([header, "[" * 100_000 + "]" * 100_000], 2, "nested deeper"),  # past Python's JSON reader: a traceback
    ):
        file.write_text("\n".join(lines) + "\n", encoding="utf-8")
        refused = cli(settings, "restore", str(file))
        assert refused.returncode == 1
        assert f"line {line}: " in refused.stderr and reason in refused.stderr, refused.stderr
    assert await graph.read(Statement("MATCH (n) RETURN count(n) AS n")) in ([], [{"n": 0}])


async def test_import_graph_restores_a_backup_into_an_empty_gate_and_refuses_a_full_one(
    written: Settings, graph: GraphBackend
) -> None:
    before = await snapshot(graph)
    data = "".join([line async for line in dump(graph)])
    target = await fresh_graph(written)
    async with open_client(target, "in_process") as client:
        dry = await ok(client, "import_graph", {"format": "backup", "data": data, "dryRun": True})
        assert (dry["entitiesCreated"], dry["dryRun"]) == (len(before[0]), True)
        answer = await ok(client, "import_graph", {"format": "backup", "data": data})
        assert (answer["entitiesCreated"], answer["relationsCreated"]) == (len(before[0]), len(before[1]))
        [grace] = (await ok(client, "open_nodes", {"names": ["Grace"], "neighbors": False}))["entities"]  # registry too
        assert grace["observations"] == ["wrote COBOL", "Ünïcødé 東京", "admiral"]
        again = await rejected(client, "import_graph", {"format": "backup", "data": data})
        assert again["error_code"] == "RESTORE_TARGET_NOT_EMPTY"
        cut = await rejected(client, "import_graph", {"format": "backup", "data": data.rsplit("\n", 2)[0]})
        assert (cut["error_code"], cut["details"]["line"]) == ("INVALID_INPUT", len(data.splitlines()))
    backend = await open_backend(target)
    try:
        assert await snapshot(backend) == before
        if target.backend is not BackendKind.MEMGRAPH or is_bolt_tier(target):  # FalkorDB's db.indexes()
            assert await indexed(backend) == await indexed(graph)  # every index the gate reads, made again
    finally:
        await backend.close()


async def test_export_graph_backup_is_what_import_graph_restores(written: Settings, graph: GraphBackend) -> None:
    """The whole round trip through MCP tools alone: export_graph's backup format from the agents' graph, then
    import_graph's into an empty one; the two graphs are the same, node by node and property by property. The
    backup takes no filter (it is the whole graph)."""
    before = await snapshot(graph)
    progress: list[float] = []

    async def heard(done: float, _total: float | None, _message: str | None) -> None:
        progress.append(done)

    async with open_client(written, "in_process") as client:
        exported = (
            await client.call_tool("export_graph", {"format": "backup"}, progress_callback=heard)
        ).structured_content
        assert exported is not None and (exported["entities"], exported["relations"]) == (
            len(before[0]),
            len(before[1]),
        )
        filtered = await rejected(client, "export_graph", {"format": "backup", "filter": {"labels": ["Person"]}})
        assert (filtered["error_code"], filtered["details"]["field"]) == ("INVALID_INPUT", "filter")
    assert progress and progress[-1] == len(before[0])
    target = await fresh_graph(written)
    async with open_client(target, "in_process") as client:
        await ok(client, "import_graph", {"format": "backup", "data": exported["content"]})
    backend = await open_backend(target)
    try:
        assert await snapshot(backend) == before
        if target.backend is not BackendKind.MEMGRAPH or is_bolt_tier(target):  # FalkorDB's db.indexes()
            assert await indexed(backend) == await indexed(graph)  # every index the gate reads, made again
    finally:
        await backend.close()

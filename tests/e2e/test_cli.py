"""The `write-gate` command as a user runs it: serve on a fresh data dir, migrate, schema load, and each command
family once through the installed console script.

Commands run in process (tests/conftest.py's run_write_gate: the console script's own `main`) on a fresh graph of
the worker's engine, except where the process is the point: `serve` on a fresh data folder, and
test_each_command_family_runs_as_the_installed_console_script, which runs migrate, schema, backup, restore,
history, engine and agents once each as a real `write-gate` process (import and export run so in
test_import_export.py's round trip, serve in every stdio and HTTP test, console in test_console.py)."""

import json
import subprocess
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import GATE_DEFAULT_TOOLS, MATRIX_SCHEMAS, CommandRun, run_write_gate, settings_env, write_gate_argv
from write_gate.core.cypher.statement import Statement
from write_gate.core.feed_windows import seq_number
from write_gate.engines import GraphBackend
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import BackendKind, Settings

pytestmark = pytest.mark.anyio


@pytest.fixture
def fresh(tmp_path: Path) -> Settings:
    return Settings(backend=BackendKind.EMBEDDED, data_dir=tmp_path / "data", embedded_fsync="everysec")


def run(settings: Settings, *args: str) -> CommandRun:
    return run_write_gate(*args, env=settings_env(settings))


def process(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed console script in a process of its own."""
    return subprocess.run(
        write_gate_argv(*args), env=settings_env(settings), capture_output=True, text=True, timeout=120
    )


async def test_serve_on_a_fresh_data_dir_is_ready_to_use(fresh: Settings) -> None:
    """The README's first command, `uv run write-gate serve`: migrations and the core registry are applied at
    start-up."""
    command, *args = write_gate_argv("serve")
    params = StdioServerParameters(command=command, args=args, env=settings_env(fresh))
    async with Client(params, read_timeout_seconds=60) as client:
        tools = sorted(tool.name for tool in (await client.list_tools()).tools)
        assert tools == sorted(GATE_DEFAULT_TOOLS)  # the profile's default toolsets
        result = await client.call_tool(
            "write_node",
            {"label": "User", "merge_keys": {"name": "Ada"}, "source": "readme", "extraction_method": "manual"},
        )
        assert not result.is_error
        assert result.structured_content["label"] == "Person"
        assert result.structured_content["remapped_from"] == ":User"


async def test_migrate_applies_each_migration_once(settings: Settings) -> None:
    first = run(settings, "migrate")
    assert first.returncode == 0, first.stderr
    assert "0001_registry_indexes" in first.stdout and "0002_core_registry" in first.stdout
    second = run(settings, "migrate")
    assert second.returncode == 0 and "up to date" in second.stdout


async def test_schema_load_creates_and_updates_schema_nodes(
    settings: Settings, graph: GraphBackend, tmp_path: Path
) -> None:
    assert run(settings, "schema", "load", str(MATRIX_SCHEMAS)).returncode == 0
    changed = tmp_path / "person.json"
    changed.write_text(
        json.dumps(
            {
                "name": "Person",
                "required_properties": ["name", "email"],
                "merge_keys": ["name"],
                "description": "updated",
            }
        )
    )
    result = run(settings, "schema", "load", str(changed))
    assert result.returncode == 0, result.stderr
    rows = await graph.read(
        Statement(
            "MATCH (s:Schema {allowed: true}) RETURN s.name AS name, s.required_properties AS req, "
            "s.description AS d ORDER BY name"
        )
    )
    by_name = {r["name"]: r for r in rows}
    assert set(by_name) == {"Person", "Organization", "Entity", "WORKS_FOR", "KNOWS"}
    assert by_name["Person"]["req"] == ["name", "email"] and by_name["Person"]["d"] == "updated"
    assert len([r for r in rows if r["name"] == "Person"]) == 1


@pytest.mark.parametrize(
    "content,reason",
    [
        ("{not json", "not readable JSON"),
        ('{"name": "Bad Label"}', "not a plain identifier"),
        ('{"name": "Schema"}', "reserved"),
        ('{"name": "X", "property_types": {"a": "date"}}', "type must be one of"),
        ('{"name": "X", "merge_keys": ["confidence"]}', "gate-computed"),
        ('{"name": "R", "kind": "relationship", "fallback": true}', "no fallback"),
    ],
)
async def test_a_bad_file_is_named_with_its_reason_and_loads_nothing(
    settings: Settings, graph: GraphBackend, tmp_path: Path, content: str, reason: str
) -> None:
    folder = tmp_path / "schemas"
    folder.mkdir()
    (folder / "a_good.json").write_text('{"name": "Good", "merge_keys": ["name"]}')
    (folder / "b_bad.json").write_text(content)
    result = run(settings, "schema", "load", str(folder))
    assert result.returncode == 1
    assert "b_bad.json" in result.stderr and reason in result.stderr and "nothing was loaded" in result.stderr
    assert await graph.read(Statement("MATCH (s:Schema) RETURN s.name AS name")) == []


async def test_the_rpg_examples_load_with_one_command(settings: Settings) -> None:
    result = run(settings, "schema", "load", str(Path(__file__).parents[2] / "schemas" / "examples" / "rpg"))
    assert result.returncode == 0, result.stderr
    assert "loaded 18 registry entries" in result.stdout  # 11 types and the 7 relationship types they use


async def test_each_command_family_runs_as_the_installed_console_script(
    settings: Settings, graph: GraphBackend, tmp_path: Path
) -> None:
    """The entry point, its exit code and its output through real pipes, once per command (the other tests run
    the same `main` in process): each changes the graph, or its file, as it says."""
    migrated = process(settings, "migrate")
    assert migrated.returncode == 0 and "0002_core_registry" in migrated.stdout, migrated.stderr
    loaded = process(settings, "schema", "load", str(MATRIX_SCHEMAS))
    assert loaded.returncode == 0 and "registry entries" in loaded.stdout, loaded.stderr
    schemas = Statement("MATCH (s:Schema {name: 'KNOWS'}) RETURN count(s) AS n")
    assert await graph.read(schemas) == [{"n": 1}]

    old = "2000-01-01T00:00:00.000Z"
    record = {"change_id": "old", "at": old, "seq": old, "seq_n": seq_number(old)}
    await graph.write(Statement("CREATE (h:WriteGateChange) SET h = $record", {"record": record}))
    pruned = process(settings, "history", "prune", "--days", "1")
    assert pruned.returncode == 0 and "pruned 1 history records" in pruned.stdout, pruned.stderr

    backup = tmp_path / "graph.backup.jsonl"
    backed = process(settings, "backup", str(backup))
    assert backed.returncode == 0 and "backed up the graph" in backed.stderr, backed.stderr
    empty = settings.model_copy(update={"graph_name": settings.graph_name + "_restored"})
    restored = process(empty, "restore", str(backup))
    assert restored.returncode == 0 and "restored " in restored.stderr, restored.stderr
    again = await open_backend(empty)
    try:
        assert await again.read(schemas) == [{"n": 1}]
    finally:
        await again.close()

    checked = process(settings.model_copy(update={"data_dir": tmp_path / "empty"}), "engine", "check")
    assert checked.returncode == 0 and "holds no append-only files yet" in checked.stdout, checked.stderr

    agents = tmp_path / "agents.toml"
    added = process(settings, "agents", "add", "bot", "--grant", "reader", "--file", str(agents))
    assert added.returncode == 0 and added.stdout.startswith("wg_"), added.stderr
    assert "[agents.bot]" in agents.read_text()

"""The `write-gate` command as a user runs it: serve on a fresh data dir, migrate, schema load, and each command
family once through the installed console script.

Commands run in process (tests/conftest.py's run_write_gate: the console script's own `main`) on a fresh graph of
the worker's engine, except where the process is the point: `serve` on a fresh data folder, and
test_each_command_family_runs_as_the_installed_console_script, which runs migrate, schema, backup, restore,
history, engine and agents once each as a real `write-gate` process (import and export run so in
test_import_export.py's round trip, serve in every stdio and HTTP test, console in test_console.py)."""

import json
import re
import subprocess
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import (
    GATE_DEFAULT_TOOLS,
    MATRIX_SCHEMAS,
    MEMORYMESH_SCHEMAS,
    CommandRun,
    run_write_gate,
    settings_env,
    write_gate_argv,
)
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


async def test_a_load_before_the_first_serve_is_not_replaced_by_the_bundled_registry(fresh: Settings) -> None:
    """MemoryMesh's `location` file on a fresh folder, then the first `serve`: the load applied the bundled
    registry first, so its `Location` (a place, no typed tools) does not replace the file's when the gate starts."""
    loaded = run(fresh, "schema", "load", str(MEMORYMESH_SCHEMAS / "location.schema.json"))
    assert loaded.returncode == 0 and "pending migrations, then loaded" in loaded.stdout, loaded.stderr
    command, *args = write_gate_argv("serve", "--toolsets", "typed")
    async with Client(StdioServerParameters(command=command, args=args, env=settings_env(fresh))) as client:
        assert "add_location" in {tool.name for tool in (await client.list_tools()).tools}
        again = run(fresh, "schema", "load", str(MEMORYMESH_SCHEMAS / "location.schema.json"))
        assert again.returncode == 0 and "migrations" not in again.stdout  # nothing pending any more
        written = await client.call_tool("add_location", {"location": {"name": "Rivendell", "type": "City"}})
        assert not written.is_error, written.structured_content


async def test_an_upgrade_s_bundled_reload_leaves_what_an_operator_loaded(
    settings: Settings, graph: GraphBackend, tmp_path: Path
) -> None:
    """A later release's migration that loads the bundled schemas again (as 0008 reloads schemas/memory) updates
    the bundled entries and leaves those an operator's `schema load` wrote."""
    assert run(settings, "schema", "load", str(MEMORYMESH_SCHEMAS / "location.schema.json")).returncode == 0
    upgrade = tmp_path / "migrations"
    upgrade.mkdir()
    (upgrade / "9999_reload_memory.json").write_text(json.dumps({"load_schemas": ["memory"]}))
    assert run(settings, "migrate", "--migrations", str(upgrade)).returncode == 0
    rows = await graph.read(Statement("MATCH (s:Schema) RETURN s.name AS name, s.description AS d, s.origin AS o"))
    entries = {row["name"]: (row["d"], row["o"]) for row in rows}
    assert entries["Location"] == ("Add a place to the story", "operator")  # MemoryMesh's, as loaded
    assert entries["Technology"][1] == "bundled"  # the bundled memory registry, reloaded


async def test_migrate_applies_each_migration_once(settings: Settings) -> None:
    first = run(settings, "migrate")
    assert first.returncode == 0, first.stderr
    assert "0001_registry_indexes" in first.stdout and "0002_core_registry" in first.stdout
    second = run(settings, "migrate")
    assert second.returncode == 0 and "up to date" in second.stdout


async def test_schema_load_creates_and_updates_schema_nodes(
    settings: Settings, graph: GraphBackend, tmp_path: Path
) -> None:
    assert run(settings, "schema", "load", "--no-migrate", str(MATRIX_SCHEMAS)).returncode == 0  # these alone
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
    result = run(settings, "schema", "load", "--no-migrate", str(changed))
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
    # 11 types and the 7 relationship types they use, but the bundled registry's LOCATED_IN (applied first)
    assert re.search(r"applied \d+ pending migrations, then loaded 17 registry entries", result.stdout)


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


def bad_paths(tmp: Path) -> dict[str, list[str]]:
    """Each command family given a missing folder, a directory where a file belongs, a file where a folder
    belongs, text that is not UTF-8, or an option out of range."""
    folder = tmp / "a_folder"
    folder.mkdir()
    afile = tmp / "a_file.txt"
    afile.write_text("x\n")
    binary = tmp / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\x00not utf-8\n")
    memory = tmp / "memory.jsonl"
    memory.write_text('{"type":"entity","name":"Ada","entityType":"person","observations":[]}\n')
    missing = tmp / "no_such_folder"
    return {
        "serve bad port": ["serve", "--transport", "http", "--port", "0"],
        "serve bad toolset": ["serve", "--toolsets", "no_such_toolset"],
        "console bad port": ["console", "--port", "x"],
        "migrate missing migrations": ["migrate", "--migrations", str(missing)],
        "migrate migrations is a file": ["migrate", "--migrations", str(afile)],
        "migrate missing schemas": ["migrate", "--migrations", str(folder), "--schemas", str(missing)],
        "schema load missing": ["schema", "load", str(missing / "registry.json")],
        "schema load not utf-8": ["schema", "load", str(binary)],
        "schema suggest missing": ["schema", "suggest", str(missing / "memory.jsonl")],
        "schema suggest a folder": ["schema", "suggest", str(folder)],
        "schema suggest not utf-8": ["schema", "suggest", str(binary)],
        "schema suggest -o a folder": ["schema", "suggest", str(memory), "-o", str(folder)],
        "import missing": ["import", str(missing / "memory.jsonl")],
        "import a folder": ["import", str(folder)],
        "import not utf-8": ["import", str(binary)],
        "import csv missing": ["import", str(missing), "--format", "csv"],
        "import report a folder": ["import", str(memory), "--dry-run", "--report", str(folder)],
        "import bad batch size": ["import", str(memory), "--batch-size", "0"],
        "import bad reliability": ["import", str(memory), "--reliability", "7"],
        "export -o a folder": ["export", "-o", str(folder)],
        "export csv --out a file": ["export", "--format", "csv", "--out", str(afile)],
        "backup a folder": ["backup", str(folder)],
        "restore missing": ["restore", str(missing / "graph.jsonl")],
        "restore a folder": ["restore", str(folder)],
        "restore not utf-8": ["restore", str(binary)],
        "restore bad batch size": ["restore", str(afile), "--batch-size", "0"],
        "agents add a folder": ["agents", "add", "bot", "--file", str(folder)],
        "agents add not utf-8": ["agents", "add", "bot", "--file", str(binary)],
        "agents remove missing": ["agents", "remove", "bot", "--file", str(missing / "agents.toml")],
        "history prune bad days": ["history", "prune", "--days", "soon"],
        "no such command": ["frobnicate"],
    }


@pytest.mark.parametrize(
    "case",
    [
        "serve bad port",
        "serve bad toolset",
        "console bad port",
        "migrate missing migrations",
        "migrate migrations is a file",
        "migrate missing schemas",
        "schema load missing",
        "schema load not utf-8",
        "schema suggest missing",
        "schema suggest a folder",
        "schema suggest not utf-8",
        "schema suggest -o a folder",
        "import missing",
        "import a folder",
        "import not utf-8",
        "import csv missing",
        "import report a folder",
        "import bad batch size",
        "import bad reliability",
        "export -o a folder",
        "export csv --out a file",
        "backup a folder",
        "restore missing",
        "restore a folder",
        "restore not utf-8",
        "restore bad batch size",
        "agents add a folder",
        "agents add not utf-8",
        "agents remove missing",
        "history prune bad days",
        "no such command",
    ],
)
async def test_a_bad_path_or_argument_is_refused_in_one_line(settings: Settings, tmp_path: Path, case: str) -> None:
    """No command ends in a traceback: each refuses a bad path or argument with one `error:` line (argparse's
    usage line before it) and a non-zero exit. In process, an exception `main` lets out fails the test."""
    result = run(settings, *bad_paths(tmp_path)[case])
    assert result.returncode != 0, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    errors = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, result.stderr


async def test_an_output_file_in_a_missing_folder_makes_the_folder(settings: Settings, tmp_path: Path) -> None:
    """docs/clients/memory-profile.md's `schema suggest -o schemas/mine/registry.json` in a fresh clone, where
    schemas/mine does not exist yet: the draft is written; so are an export's and a backup's files."""
    memory = tmp_path / "memory.jsonl"
    memory.write_text('{"type":"entity","name":"Sol","entityType":"star","observations":[]}\n')
    env = settings_env(settings)
    draft = "schemas/mine/registry.json"
    suggested = run_write_gate("schema", "suggest", str(memory), "-o", draft, env=env, cwd=tmp_path)
    assert suggested.returncode == 0, suggested.stderr
    assert "Star" in (tmp_path / "schemas" / "mine" / "registry.json").read_text()
    exported = run(settings, "export", "-o", str(tmp_path / "out" / "graph.jsonl"))
    assert exported.returncode == 0 and (tmp_path / "out" / "graph.jsonl").exists(), exported.stderr
    backed = run(settings, "backup", str(tmp_path / "backups" / "graph.jsonl"))
    assert backed.returncode == 0 and (tmp_path / "backups" / "graph.jsonl").exists(), backed.stderr

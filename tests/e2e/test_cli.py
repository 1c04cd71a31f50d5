"""The `write-gate` command as a user runs it: serve on a fresh data dir, migrate, schema load."""

import json
import subprocess
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import GATE_DEFAULT_TOOLS, MATRIX_SCHEMAS, settings_env, write_gate_argv
from write_gate.core.cypher.statement import Statement
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import BackendKind, Settings

pytestmark = pytest.mark.anyio


@pytest.fixture
def fresh(tmp_path: Path) -> Settings:
    return Settings(backend=BackendKind.EMBEDDED, data_dir=tmp_path / "data", embedded_fsync="everysec")


def run(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
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


def test_migrate_applies_each_migration_once(fresh: Settings) -> None:
    first = run(fresh, "migrate")
    assert first.returncode == 0, first.stderr
    assert "0001_registry_indexes" in first.stdout and "0002_core_registry" in first.stdout
    second = run(fresh, "migrate")
    assert second.returncode == 0 and "up to date" in second.stdout


async def test_schema_load_creates_and_updates_schema_nodes(fresh: Settings, tmp_path: Path) -> None:
    assert run(fresh, "schema", "load", str(MATRIX_SCHEMAS)).returncode == 0
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
    result = run(fresh, "schema", "load", str(changed))
    assert result.returncode == 0, result.stderr
    backend = await open_backend(fresh)
    try:
        rows = await backend.read(
            Statement(
                "MATCH (s:Schema {allowed: true}) RETURN s.name AS name, s.required_properties AS req, "
                "s.description AS d ORDER BY name"
            )
        )
    finally:
        await backend.close()
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
    fresh: Settings, tmp_path: Path, content: str, reason: str
) -> None:
    folder = tmp_path / "schemas"
    folder.mkdir()
    (folder / "a_good.json").write_text('{"name": "Good", "merge_keys": ["name"]}')
    (folder / "b_bad.json").write_text(content)
    result = run(fresh, "schema", "load", str(folder))
    assert result.returncode == 1
    assert "b_bad.json" in result.stderr and reason in result.stderr and "nothing was loaded" in result.stderr
    backend = await open_backend(fresh)
    try:
        assert await backend.read(Statement("MATCH (s:Schema) RETURN s.name AS name")) == []
    finally:
        await backend.close()


def test_the_rpg_examples_load_with_one_command(fresh: Settings) -> None:
    result = run(fresh, "schema", "load", str(Path(__file__).parents[2] / "schemas" / "examples" / "rpg"))
    assert result.returncode == 0, result.stderr
    assert "loaded 18 registry entries" in result.stdout  # 11 types and the 7 relationship types they use

"""docs/tools/toolsets.md and the neighbours section of docs/tools/reads.md, held to what the server does: the catalogue
is the toolsets, the commands serve what the page says (over stdio), and every other block is a call's real answer
(the cost table's figures are tests/e2e/test_docs_figures.py's to hold)."""

import importlib.util
import json
import re
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import (
    DISCOVERY_TOOLS,
    GATE_DEFAULT_TOOLS,
    TESTS,
    ok,
    rejected,
    settings_env,
    write_gate_argv,
)
from tests.e2e import readme_blocks as rb
from tests.e2e.test_memory_profile import MEMORY_TOOLS
from write_gate.access.agents import READER, AgentRecord, AgentsFile
from write_gate.core.toolsets import DEFAULTS, DISCOVERY, TOOLSETS, TYPED
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources
from write_gate.surface.profiles import PROFILES
from write_gate.surface.server import build_server

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
TOOLSETS_PAGE = ROOT / "docs" / "tools" / "toolsets.md"
READS_PAGE = ROOT / "docs" / "tools" / "reads.md"
HISTORY = {"get_history", "list_conflicts", "resolve_conflict"}
SEARCH = set(TOOLSETS["search"].tools)


def bench_tool_lists() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_tool_lists", ROOT / "bench" / "tool_lists.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def block(page: Path, key: str) -> rb.Block:
    [found] = [b for b in rb.blocks(page) if b.key == key]
    return found


def table(page: Path, start: str, end: str | None = None) -> list[list[str]]:
    """The rows of the Markdown table after the `start` marker (and before `end`), cells stripped, header aside."""
    text = page.read_text(encoding="utf-8").split(start, 1)[1]
    lines = text.split(end, 1)[0] if end else text.split("\n\n", 1)[0]
    rows = [line for line in lines.strip().splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[2:]]


def test_the_catalogue_is_the_toolsets() -> None:
    rows = {re.sub(r"`", "", row[0]): row for row in table(TOOLSETS_PAGE, "<!-- toolsets:catalogue -->")}
    assert list(rows) == list(TOOLSETS)
    for name, (_, tools, default) in rows.items():
        if name != TYPED:
            assert set(re.findall(r"`(\w+)`", tools)) == TOOLSETS[name].tools, name
        profiles = {profile for profile, sets in DEFAULTS.items() if name in sets}
        expected = (
            ", ".join(sorted(profiles)) if profiles else ("with `--dynamic-toolsets`" if name == DISCOVERY else "")
        )
        assert default == expected, name
    assert all(spec.toolset == TYPED for spec in PROFILES["gate"] if spec.label is not None)


async def test_the_commands_serve_what_the_page_says(settings: Settings) -> None:
    [toolsets] = [b for b in rb.blocks(TOOLSETS_PAGE) if b.lang == "sh" and "--toolsets" in b.text]
    [dynamic] = [b for b in rb.blocks(TOOLSETS_PAGE) if b.lang == "sh" and "--dynamic-toolsets" in b.text]
    expected = {
        "write-gate serve --toolsets history,search": GATE_DEFAULT_TOOLS | HISTORY | SEARCH,
        "write-gate serve --profile memory --toolsets all": MEMORY_TOOLS,
        "write-gate serve --dynamic-toolsets": GATE_DEFAULT_TOOLS | DISCOVERY_TOOLS,
    }
    assert rb.commands(toolsets) + rb.commands(dynamic) == list(expected)
    listed: dict[str, set[str]] = {}

    async def serve(command: str) -> None:
        _, *args = rb.argv(command)
        command_line = write_gate_argv(*args)
        server = StdioServerParameters(command=command_line[0], args=command_line[1:], env=settings_env(settings))
        async with Client(server, read_timeout_seconds=120) as client:
            listed[command] = {tool.name for tool in (await client.list_tools()).tools}

    async with anyio.create_task_group() as servers:  # three servers starting at once, on one data folder
        for command in expected:
            servers.start_soon(serve, command)
    assert listed == expected


async def test_the_historian_sees_and_may_do_what_the_page_says(
    settings: Settings, matrix_graph: GraphBackend, tmp_path: Path
) -> None:
    shown = tomllib.loads(block(TOOLSETS_PAGE, "agents:historian").text)["agents"]["historian"]
    record = AgentRecord.model_validate({**shown, "token_sha256": "0" * 64})
    agents = AgentsFile(tmp_path / "agents.toml", {"historian": record})
    agents.save()
    historian = settings.model_copy(update={"agents_file": agents.path, "agent": "historian"})
    async with Client(build_server(historian, auto_migrate=False)) as client:
        reads = {"search_nodes", "open_nodes", "read_graph", "get_schema"}
        assert {t.name for t in (await client.list_tools()).tools} == reads | HISTORY
        unknown = await rejected(client, "resolve_conflict", {"conflict_id": "k1", "pick": "current"})
        assert unknown["details"]["reason"] == "unknown_conflict"  # allowed: only the conflict is missing
        person = {"label": "Person", "merge_keys": {"name": "Ada"}, "source": "docs", "extraction_method": "manual"}
        assert (await rejected(client, "write_node", person))["error_code"] == "PERMISSION_DENIED"


async def test_the_discovery_answers_are_as_shown(settings: Settings, tmp_path: Path) -> None:
    agents = AgentsFile.load(tmp_path / "agents.toml")
    agents.add("reader", READER)
    agents.save()
    reader = settings.model_copy(update={"agents_file": agents.path, "agent": "reader", "dynamic_toolsets": True})
    async with Client(build_server(reader, auto_migrate=False), mode="legacy") as client:
        rb.assert_matches(
            await ok(client, "list_toolsets", {}),
            json.loads(block(TOOLSETS_PAGE, "answer:list_toolsets#discovery").text),
        )
        call = json.loads(block(TOOLSETS_PAGE, "call:enable_toolset#discovery").text)
        rb.assert_matches(
            await ok(client, "enable_toolset", call),
            json.loads(block(TOOLSETS_PAGE, "answer:enable_toolset#discovery").text),
        )
        denied = await rejected(client, "enable_toolset", {"toolset": "quarantine"})
        rb.assert_matches(denied, json.loads(block(TOOLSETS_PAGE, "answer:enable_toolset#denied").text))


async def test_the_neighbours_example_answers_as_shown(settings: Settings, graph: GraphBackend) -> None:
    """docs/tools/reads.md: MemoryMesh's own schema files, Frodo located in Mordor, Mordor in Gondor."""
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "memorymesh"]))
    prov = {"source": "campaign-log", "extraction_method": "manual"}
    async with Client(build_server(settings, auto_migrate=False)) as client:
        await ok(client, "add_location", {"location": {"name": "Gondor", "type": "City"}, **prov})
        mordor = {"name": "Mordor", "type": "Wilderness", "parentLocation": "Gondor"}
        await ok(client, "add_location", {"location": mordor, **prov})
        frodo = {"name": "Frodo", "role": "Ranger", "status": "Active", "currentLocation": "Mordor"}
        await ok(client, "add_npc", {"npc": frodo, **prov})
        call: dict[str, Any] = json.loads(block(READS_PAGE, "call:open_nodes#neighbours").text)
        answer = await ok(client, "open_nodes", call)
    rb.assert_matches(answer, json.loads(block(READS_PAGE, "answer:open_nodes#neighbours").text), "docs/tools/reads.md")

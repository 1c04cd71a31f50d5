"""The `admiralty` and `stix` formula providers through a real MCP client session on every engine: writes
(generic, typed, memory profile) stamped with the confidence each computes, read back through the tools and
the graph; rejections of methods they do not accept; and a stamped method they refuse stopping the start."""

import json
import logging
import os
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.conftest import MATRIX_SCHEMAS, TESTS, open_client, settings_env, write_gate_argv
from write_gate import cli
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.serving.config import ConfigurationError, Settings
from write_gate.store.bundled import bundled
from write_gate.store.schema_files import load_into_graph, read_sources
from write_gate.surface.server import build_server

pytestmark = pytest.mark.anyio
RPG = bundled("schemas") / "examples" / "rpg"


@dataclass(frozen=True)
class Case:
    provider: str
    node_method: str
    node_confidence: float
    edge_method: str
    edge_confidence: float
    refused: str  # a near miss the provider must reject
    methods: int


CASES = [
    Case("admiralty", "B2", 0.56, "F6", 0.25, "b2", 36),
    Case("stix", "wep:likely", 0.7, "dni:very_likely", 0.85, "admiralty:6", 34),
]


@pytest.fixture(params=CASES, ids=[case.provider for case in CASES])
def case(request: pytest.FixtureRequest) -> Case:
    return request.param


@pytest.fixture
async def client(settings: Settings, graph: GraphBackend, case: Case) -> AsyncIterator[Client]:
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS, RPG]))
    provider = settings.model_copy(update={"formula_provider": case.provider, "toolsets": "typed"})  # typed listed
    async with open_client(provider, "in_process") as client:
        yield client


async def call(client: Client, tool: str, args: dict[str, Any], *, error: bool = False) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert bool(result.is_error) is error, result.structured_content
    assert result.structured_content is not None
    return result.structured_content


async def test_writes_are_stamped_with_the_providers_confidence(
    client: Client, graph: GraphBackend, case: Case
) -> None:
    # A low reliability on purpose: these providers take the whole judgement from the stated grade or value.
    ada = {"label": "Person", "merge_keys": {"name": "Ada"}, "source": "brief", "reliability": 0.1}
    written = await call(client, "write_node", {**ada, "extraction_method": case.node_method})
    assert written["confidence"] == case.node_confidence
    acme = {"label": "Organization", "merge_keys": {"name": "Acme"}, "source": "brief", "extraction_method": "A1"}
    if case.provider == "stix":
        acme["extraction_method"] = "nlmh:high"
    assert (await call(client, "write_node", acme))["confidence"] == (0.9 if case.provider == "admiralty" else 0.85)
    works = {
        "from_label": "Person",
        "from_keys": {"name": "Ada"},
        "to_label": "Organization",
        "to_keys": {"name": "Acme"},
        "type": "WORKS_FOR",
        "source": "brief",
        "extraction_method": case.edge_method,
        "reliability": 1.0,
    }
    assert (await call(client, "write_relationship", works))["confidence"] == case.edge_confidence

    # Read back through the gate's own read tool, and in the graph.
    [entity] = (await call(client, "open_nodes", {"names": ["Ada"], "neighbors": False}))["entities"]
    assert entity["properties"]["confidence"] == case.node_confidence
    assert entity["properties"]["extraction_method"] == case.node_method
    [relation] = [r for r in (await call(client, "open_nodes", {"names": ["Ada"]}))["relations"]]
    assert relation["properties"]["confidence"] == case.edge_confidence
    rows = await graph.read(
        Statement(
            "MATCH (a:Person {name: 'Ada'})-[r:WORKS_FOR]->(:Organization) "
            "RETURN a.confidence AS a, a.extraction_method AS am, r.confidence AS r, r.extraction_method AS rm"
        )
    )
    assert rows == [
        {"a": case.node_confidence, "am": case.node_method, "r": case.edge_confidence, "rm": case.edge_method}
    ]


async def test_methods_the_provider_does_not_accept_are_refused(
    client: Client, graph: GraphBackend, case: Case
) -> None:
    schema = await call(client, "get_schema", {})
    assert len(schema["extraction_methods"]) == case.methods and case.node_method in schema["extraction_methods"]
    for method in (case.refused, "llm"):
        node = {"label": "Person", "merge_keys": {"name": "Bo"}, "source": "brief", "extraction_method": method}
        out = await call(client, "write_node", node, error=True)
        assert out["error_code"] == "INVALID_EXTRACTION_METHOD"
        assert out["details"]["allowed"] == schema["extraction_methods"]
    assert await graph.read(Statement("MATCH (n:Person {name: 'Bo'}) RETURN n")) == []


async def test_typed_tools_advertise_and_take_the_providers_methods(
    client: Client, graph: GraphBackend, case: Case
) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    advertised = tools["add_npc"].input_schema["properties"]["extraction_method"]
    assert "pattern" in advertised and "enum" not in advertised  # not 36 grades in each of 22 tools
    npc = {"npc": {"name": "Gandalf", "role": "Wizard", "status": "Active"}, "source": "dm-notes", "reliability": 0.2}
    assert (await call(client, "add_npc", {**npc, "extraction_method": case.node_method}))["confidence"] == (
        case.node_confidence
    )
    refused = await call(client, "add_npc", {**npc, "extraction_method": case.refused}, error=True)
    assert refused["error_code"] == "INVALID_EXTRACTION_METHOD"
    rows = await graph.read(Statement("MATCH (n:Npc {name: 'Gandalf'}) RETURN n.confidence AS c"))
    assert rows == [{"c": case.node_confidence}]


@pytest.mark.parametrize(("provider", "method", "confidence"), [("admiralty", "C3", 0.3), ("stix", "0-10:7", 0.7)])
async def test_the_memory_profile_stamps_the_configured_method(
    settings: Settings, graph: GraphBackend, provider: str, method: str, confidence: float
) -> None:
    """docs/provenance/formulas.md: with these providers, WRITE_GATE_MEMORY_EXTRACTION_METHOD names a grade or
    scale value."""
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "memory"]))
    memory = settings.model_copy(update={"formula_provider": provider, "memory_extraction_method": method})
    async with open_client(memory, "in_process", profile="memory") as client:
        entity = {"name": "Alice", "entityType": "person", "observations": ["Likes tea"]}
        result = await client.call_tool("create_entities", {"entities": [entity]})
        assert not result.is_error, result.structured_content
    rows = await graph.read(
        Statement("MATCH (n:Person {name: 'Alice'}) RETURN n.confidence AS c, n.extraction_method AS m")
    )
    assert rows == [{"c": confidence, "m": method}]


# --- a stamped method the provider refuses stops the start, in one line -------------------------------------


@pytest.mark.parametrize(("provider", "transport"), [("admiralty", []), ("stix", ["--transport", "http", "--no-auth"])])
def test_the_memory_profile_does_not_start_with_a_method_the_provider_refuses(
    tmp_path: Path, provider: str, transport: list[str]
) -> None:
    """No engine: the check comes before any is opened (an embedded data folder that is never started)."""
    refusing = Settings(data_dir=tmp_path, formula_provider=provider)  # memory_extraction_method: llm
    with pytest.raises(ConfigurationError, match="WRITE_GATE_MEMORY_EXTRACTION_METHOD=llm"):
        build_server(refusing, profile="memory")
    build_server(refusing, profile="gate")  # the gate profile stamps nothing itself
    serve = write_gate_argv("serve", "--no-migrate", "--profile", "memory", *transport)
    done = subprocess.run(serve, env=settings_env(refusing), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith(f"error: WRITE_GATE_MEMORY_EXTRACTION_METHOD=llm is not a method the '{provider}'")


def write_gate(monkeypatch: pytest.MonkeyPatch, settings: Settings, *args: str) -> int:
    """`write-gate ARGS` with these settings, through the console script's own main in this process (an
    interpreter's start-up per command costs ~10 s on a loaded machine)."""
    for name in [n for n in os.environ if n.startswith(("WRITE_GATE_", "MEMGRAPH_", "FALKORDB_"))]:
        monkeypatch.delenv(name)
    for name, value in settings_env(settings).items():
        monkeypatch.setenv(name, value)
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        return cli.main(list(args))
    finally:  # main routes logging to its own handler: give pytest's back
        root.handlers[:] = handlers
        root.setLevel(level)
        logging.captureWarnings(False)


async def test_import_checks_its_method_before_the_first_line(
    settings: Settings, graph: GraphBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "memory"]))
    memory_file = tmp_path / "memory.jsonl"
    memory_file.write_text(json.dumps({"type": "entity", "name": "Ada", "entityType": "person", "observations": []}))
    admiralty = settings.model_copy(update={"formula_provider": "admiralty"})

    def run(*extra: str) -> tuple[int, str]:
        code = write_gate(monkeypatch, admiralty, "import", str(memory_file), "--no-migrate", "--quiet", *extra)
        return code, capsys.readouterr().err

    code, err = await anyio.to_thread.run_sync(run)
    assert code == 2 and err.startswith(
        "error: WRITE_GATE_MEMORY_EXTRACTION_METHOD=llm is not a method the 'admiralty'"
    )
    assert len(err.splitlines()) == 1
    assert await graph.read(Statement("MATCH (n:Person) RETURN n")) == []
    code, err = await anyio.to_thread.run_sync(run, "--extraction-method", "b2")
    assert code == 2 and err.startswith("error: --extraction-method=b2 is not a method the 'admiralty'")
    code, err = await anyio.to_thread.run_sync(run, "--extraction-method", "B2")
    assert code == 0, err
    rows = await graph.read(Statement("MATCH (n:Person {name: 'Ada'}) RETURN n.confidence AS c"))
    assert rows == [{"c": 0.56}]

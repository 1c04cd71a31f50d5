"""The memory profile as a drop-in: the official memory server (`@modelcontextprotocol/server-memory` from npm,
installed from the lock file beside this module) and `write-gate serve --profile memory` (stdio, on a data folder
`write-gate migrate` just made) get the same scripted calls through the Python SDK's client. After each step the
answers (isError, the text parsed, structured content) and both whole graphs are compared entity by entity and
relation by relation, as are what each lists (tools with their titles, descriptions and hints, resources,
capabilities); every difference must be one of compare.EXPECTED, and each of those must occur."""

import json
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, Implementation, StdioServerParameters

from tests.clients.conftest import node_project
from tests.conftest import settings_env, write_gate_argv
from tests.official_memory.compare import EXPECTED, Answer, Comparison, parse_text
from tests.official_memory.listing import compare_listings
from tests.official_memory.script import SCRIPT
from write_gate.serving.config import BackendKind, Settings

pytestmark = pytest.mark.anyio
HERE = Path(__file__).parent
OFFICIAL_VERSION = "2026.8.31"  # the version issue 10 compared against


def official_server(memory_file: Path) -> StdioServerParameters:
    project = node_project("official_memory", HERE)
    package = project / "node_modules" / "@modelcontextprotocol" / "server-memory"
    assert json.loads((package / "package.json").read_text())["version"] == OFFICIAL_VERSION
    return StdioServerParameters(
        command="node", args=[str(package / "dist" / "index.js")], env={"MEMORY_FILE_PATH": str(memory_file)}
    )


def memory_profile(data_dir: Path) -> StdioServerParameters:
    settings = Settings(backend=BackendKind.EMBEDDED, data_dir=data_dir, graph_name="memory", embedded_fsync="everysec")
    env = settings_env(settings)
    subprocess.run(write_gate_argv("migrate"), env=env, check=True, capture_output=True, timeout=120)
    command, *args = write_gate_argv("serve", "--profile", "memory")
    return StdioServerParameters(command=command, args=args, env=env)


async def call(client: Client, tool: str, args: dict[str, Any]) -> Answer:
    result = await client.call_tool(tool, args)
    [content] = result.content
    return Answer(result.is_error, parse_text(content.text), result.structured_content)


async def layout(client: Client, tool: str, args: dict[str, Any]) -> tuple[Answer, str | None]:
    """The answer, and its text's layout where it is JSON: "indented" as JSON.stringify(x, null, 2) writes it (the
    official server's answers), or "other"."""
    result = await client.call_tool(tool, args)
    [content] = result.content
    answer = Answer(result.is_error, parse_text(content.text), result.structured_content)
    if not isinstance(answer.text, dict | list):
        return answer, None
    return answer, "indented" if content.text == json.dumps(answer.text, ensure_ascii=False, indent=2) else "other"


async def whole_graph_of_ours(client: Client) -> dict[str, Any]:
    """Every page of read_graph, then open_nodes' pages for each entity it truncated."""
    entities, relations, truncated, cursor = [], {}, [], None
    while True:
        page = await call(client, "read_graph", {"cursor": cursor} if cursor else {})
        assert not page.is_error, page.text
        entities += page.text["entities"]
        relations |= {(r["from"], r["to"], r["relationType"]): r for r in page.text["relations"]}
        truncated += page.text["truncated"]
        if (cursor := page.text["next_cursor"]) is None:
            break
    for name in truncated:
        cursor = None
        while True:
            more = await call(client, "open_nodes", {"names": [name], **({"cursor": cursor} if cursor else {})})
            relations |= {(r["from"], r["to"], r["relationType"]): r for r in more.text["relations"]}
            if (cursor := more.text["next_cursor"]) is None:
                break
    return {"entities": entities, "relations": list(relations.values())}


async def listing(client: Client) -> dict[str, Any]:
    """What a client learns before calling anything: the tools, the resources and templates, the capabilities."""
    tools = {
        tool.name: {
            "title": tool.title,
            "description": tool.description,
            "annotations": tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else {},
            "input": tool.input_schema,
            "output": tool.output_schema,
        }
        for tool in (await client.list_tools()).tools
    }
    resources = [str(r.uri) for r in (await client.list_resources()).resources]
    resources += [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
    capabilities = client.server_capabilities.model_dump(by_alias=True, exclude_none=True)
    return {"tools": tools, "resources": resources, "capabilities": capabilities}


@pytest.fixture
async def both(tmp_path: Path) -> AsyncIterator[tuple[Client, Client]]:
    theirs = official_server(tmp_path / "memory.jsonl")  # skips here where node or npm is missing
    ours = memory_profile(tmp_path / "data")
    info = Implementation(name="drop-in", version="1.0")
    async with (
        Client(ours, read_timeout_seconds=60, client_info=info) as gate,
        Client(theirs, read_timeout_seconds=60, client_info=info) as official,
    ):
        yield gate, official


async def test_the_memory_profile_answers_as_the_official_server(both: tuple[Client, Client]) -> None:
    gate, official = both
    comparison, before = Comparison(), []
    reports = [
        f"listing: {line}" for line in compare_listings(await listing(gate), await listing(official), comparison.note)
    ]
    for number, (tool, args) in enumerate(SCRIPT, 1):
        (ours, our_layout), (theirs, their_layout) = await layout(gate, tool, args), await layout(official, tool, args)
        found = comparison.step(tool, args, ours, theirs)
        if not ours.is_error and not theirs.is_error and our_layout != their_layout:
            found.append(f"the text's layout: ours {our_layout}, theirs {their_layout}")
        whole = await call(official, "read_graph", {})
        graph = comparison.graphs(await whole_graph_of_ours(gate), whole.text)
        found += [f"graph: {line}" for line in graph if line not in before]  # each from the step it appears at
        before = graph
        reports += [f"step {number} {tool} {json.dumps(args, ensure_ascii=False)[:120]}: {line}" for line in found]
    assert reports == [], "differences not in EXPECTED:\n" + "\n".join(reports)
    assert set(EXPECTED) - comparison.seen == set(), "listed differences that no longer occur"

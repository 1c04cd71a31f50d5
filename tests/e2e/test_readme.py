"""Every fenced block of README.md and of the documentation's pages (docs/, in mkdocs.yml's nav) is run, or checked
as far as it can be here, so docs and server cannot drift.

A block or command that no test covers fails `test_every_block_is_run_or_exempt`: add it to RUN with the test that
runs it (here, or `tests/<path>.py::test_name` in another module), or to EXEMPT with why it cannot run here and
what is checked instead. docs/development/docs.md says how a page's blocks are named and tested."""

import contextlib
import importlib
import io
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
import yaml
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning
from rdflib import Graph, Literal, URIRef
from rdflib import namespace as rdf_namespace  # a module: pytest's scan of the globals trips on a namespace

from tests.conftest import GATE_DEFAULT_TOOLS, open_client, run_write_gate, settings_env, write_gate_argv
from tests.e2e import readme_blocks as rb
from tests.e2e.http_process import agents_command, http_gate
from write_gate import cli
from write_gate.core.claims import ValueProvenance
from write_gate.core.conflicts import Conflict, Outcome
from write_gate.core.cypher.change_order import numbered
from write_gate.core.cypher.statement import Statement
from write_gate.core.decisions import UnknownLabelPolicy
from write_gate.core.history import Subject, conflict_records
from write_gate.core.identity import identity_key
from write_gate.core.registry import ConflictPolicy
from write_gate.engines import GraphBackend
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import BackendKind, Settings
from write_gate.store.migrations import migrate
from write_gate.surface.server import build_server

pytestmark = pytest.mark.anyio
# One engine is enough: the README's behaviour on every engine is the matrix's business.
EMBEDDED = pytest.mark.parametrize("engine", ["embedded"], indirect=True)
ROOT = rb.ROOT
NOW = "2026-01-02T00:00:00.000Z"
UV = os.environ.get("UV") or shutil.which("uv") or "uv"  # `uv run` names itself; a pyenv shim may not run here

# Calls whose request the README describes in words, not in a block: what the test sends for them.
IMPLIED_REQUESTS: dict[str, dict[str, Any]] = {
    "write_nodes": {
        "items": [
            {"label": "Person", "merge_keys": {"name": "Ada"}, "source": "notes", "extraction_method": "api"},
            {
                "label": "Person",
                "merge_keys": {"name": "Eve"},
                "properties": {"source": "x"},
                "source": "notes",
                "extraction_method": "api",
            },
            {"label": ":User", "merge_keys": {"name": "Bob"}, "source": "notes", "extraction_method": "api"},
        ]
    },
    "refresh_schema_cache": {},
}

COMMANDS_TABLE = (
    "write-gate serve [--transport stdio|http] [--host H] [--port P] [--profile gate|memory|mesh] [--no-migrate]"
)
MEMGRAPH_ENV = "WRITE_GATE_BACKEND=memgraph MEMGRAPH_URL=bolt://db:7687 MEMGRAPH_USER=gate MEMGRAPH_PASSWORD=..."
AGENTS_ADD = "uv run write-gate agents add"
FORMULA_SERVE = [
    "WRITE_GATE_FORMULA_PROVIDER=admiralty uv run write-gate serve",
    "WRITE_GATE_FORMULA_PROVIDER=stix WRITE_GATE_MEMORY_EXTRACTION_METHOD=0-10:3 "
    "uv run write-gate serve --profile memory",
]

# The spaces example's commands: three agents, the registry loaded, the server started with two spaces.
SPACES_ENV = "WRITE_GATE_SPACES=team_a,team_b WRITE_GATE_DEFAULT_SPACE=team_a"
SPACES_COMMANDS = [
    f"{AGENTS_ADD} alice --spaces team_a --file agents.toml",
    f"{AGENTS_ADD} bob --spaces team_b --file agents.toml",
    f"{AGENTS_ADD} lead --spaces team_a team_b --file agents.toml",
    f"{SPACES_ENV} uv run write-gate schema load schemas/examples/rpg",
    f"{SPACES_ENV} WRITE_GATE_AGENTS_FILE=agents.toml uv run write-gate serve --transport http",
]

# The Property names section's write_node examples (`call:write_node#<example>` and its answer), in order.
PROPERTY_EXAMPLES = ("property-names", "unknown-property")

# The knowledge tools' examples, in the README's order, each a call and its answer (`call:<tool>#knowledge`).
KNOWLEDGE_EXAMPLES = (
    "add_tags",
    "remove_tags",
    "add_tags_to_multiple_entities",
    "set_importance",
    "set_entity_parent",
    "get_parent",
    "get_children",
    "get_ancestors",
    "get_descendants",
    "get_subtree",
    "archive_entities",
    "restore_entities",
)
# The Statistics and saved searches section's calls, in the order its example makes them.
STATS_TOOLS = (
    "get_graph_stats",
    "save_search",
    "execute_saved_search",
    "list_saved_searches",
    "update_saved_search",
    "delete_saved_search",
)

# Each test, and the blocks (by key) or sh commands it runs.
RUN = {
    "tests/e2e/test_toolsets_docs.py::test_the_commands_serve_what_the_page_says": [
        "write-gate serve --toolsets history,search",
        "write-gate serve --profile memory --toolsets all",
        "write-gate serve --dynamic-toolsets",
    ],
    "tests/e2e/test_toolsets_docs.py::test_the_historian_sees_and_may_do_what_the_page_says": ["agents:historian"],
    "tests/e2e/test_toolsets_docs.py::test_the_discovery_answers_are_as_shown": [
        "answer:list_toolsets#discovery",
        "call:enable_toolset#discovery",
        "answer:enable_toolset#discovery",
        "answer:enable_toolset#denied",
    ],
    "tests/e2e/test_memory_profile.py::test_compress_graph_merges_what_find_duplicates_groups": [
        "answer:compress_graph#memory"
    ],
    "tests/e2e/test_toolsets_docs.py::test_the_neighbours_example_answers_as_shown": [
        "call:open_nodes#neighbours",
        "answer:open_nodes#neighbours",
    ],
    "tests/unit/test_console_docs.py::test_the_pages_command_lines_are_the_clis": [
        "console:add-operator",
        "console:console-command",
        "observability:scraper",
        "observability:stdio",
    ],
    "test_first_command_serves": ["uv run write-gate serve"],
    "test_tool_calls_answer_as_shown": [
        *(
            f"{kind}:{tool}"
            for tool in (
                "write_node",
                "write_relationship",
                "add_npc",
                "search_nodes",
                "find_duplicates",
                "merge_entities",
                "get_history",
            )
            for kind in ("call", "answer")
        ),
        "answer:write_nodes",
        "answer:refresh_schema_cache",
        "my-schemas/npc.json",
        "call:write_relationship#refused",
        "answer:write_relationship#refused",
    ],
    "test_property_names_example": [
        "my-schemas/contacts.json",
        *(f"{kind}:write_node#{example}" for example in PROPERTY_EXAMPLES for kind in ("call", "answer")),
    ],
    "test_conflicts_example": [
        "my-schemas/people.json",
        "call:write_node#conflict-api",
        "call:write_node#conflict-kept",
        "answer:write_node#conflict-kept",
        "call:resolve_conflict#conflict",
    ],
    "test_conflict_policies_example": ["my-schemas/ledger.json"],
    "test_rpg_examples_load": ["uv run write-gate schema load schemas/examples/rpg"],
    "tests/e2e/test_mesh_profile.py::test_refusals_carry_memorymesh_s_error_context_and_suggestions": [
        "answer:add_npc#mesh-refusal"
    ],
    "tests/e2e/test_mesh_tools.py::test_add_nodes_reads_declared_fields_from_metadata_and_keeps_it_all": [
        "call:add_nodes#mesh"
    ],
    "test_provenance_call_filters_as_described": ["call:open_nodes_provenance"],
    "test_list_conflicts_example": ["call:list_conflicts#open", "answer:list_conflicts#open"],
    "test_ranked_search_example": ["call:search_nodes_ranked#ranked", "answer:search_nodes_ranked#ranked"],
    "test_knowledge_tools_example": [
        f"{kind}:{tool}#knowledge" for tool in KNOWLEDGE_EXAMPLES for kind in ("call", "answer")
    ],
    "test_stats_and_saved_searches_example": [
        f"{kind}:{tool}#stats" for tool in STATS_TOOLS for kind in ("call", "answer")
    ],
    "test_export_example": ["call:export_graph#export", "answer:export_graph#export"],
    "test_prov_example": ["call:export_graph#prov", "answer:export_graph#prov", "turtle:prov-excerpt"],
    "test_change_feed_example": [
        "call:changes_since#feed",
        "answer:changes_since#feed",
        "subscribe#feed",
        "notification#feed",
    ],
    "test_listen_example": ["listen#feed"],
    "test_import_graph_example": ["call:import_graph#merge", "answer:import_graph#merge"],
    "test_quarantine_example": [
        "my-schemas/vehicle.json",
        "write-gate schema load my-schemas/vehicle.json",
        *(
            f"{kind}:{tool}#quarantine"
            for tool in ("write_node", "list_quarantine", "replay_quarantine")
            for kind in ("call", "answer")
        ),
    ],
    "test_import_and_backup_commands": [
        "write-gate import people.csv --format csv --strategy merge --dry-run",
        "write-gate backup graph.backup.jsonl",
        "write-gate restore graph.backup.jsonl",
    ],
    "test_commands_table": [
        f"{COMMANDS_TABLE} [--no-auth] [--http-response sse|json] [--stateless] [--workers N]",
        "write-gate agents add NAME [--grant writer|reader|full] [--tools ...] [--labels ...] [--types ...] "
        "[--max-writes-per-minute N] [--max-batch-items N] [--file F]",
        "write-gate agents remove NAME [--file F]",
        "write-gate migrate",
        "write-gate schema load schemas/core my-schemas/extra.json",
        "my-schemas/extra.json",
        "write-gate schema suggest memory.jsonl [-o draft.json]",
        "write-gate import memory.jsonl [--format json|jsonl|csv|graphml] [--strategy skip|update|replace|merge|fail] "
        "[--dry-run] [--report r.json] [--batch-size 500] [--source S]",
        "write-gate backup graph.jsonl",
        "write-gate restore graph.jsonl",
        "write-gate export [--format jsonl|json|csv|graphml|gexf|markdown|dot|mermaid|prov-turtle|prov-jsonld|"
        "prov-ntriples|backup] [--labels L ...] "
        "[-o FILE] [--out DIR]",
        "write-gate engine check [--report]",
        "write-gate history prune [--days N]",
    ],
    "test_agents_commands_write_the_file_shown": [
        f"{AGENTS_ADD} crawler --labels Person Organization --types WORKS_FOR --file agents.toml",
        f"{AGENTS_ADD} analyst --grant reader --file agents.toml",
        "[agents.crawler]",
    ],
    "test_claude_desktop_config_starts_the_server": ['{"mcpServers": {"write-gate": {'],
    "test_python_snippet_runs_from_anywhere": ["import asyncio"],
    "test_python_http_snippet_sends_its_token": ["python-http"],
    "test_formula_provider_examples": [*FORMULA_SERVE, "formula-call:admiralty", "formula-answer:admiralty"],
    "test_development_tree_names_real_files": ["src/write_gate/"],
    "test_safe_retries_example": [
        "call:write_relationship#retry",
        "answer:write_relationship#retry",
        "meta:write_relationship#retry",
    ],
    "test_limits_per_agent_example": ["agents:limits", "answer:write_node#limited"],
    "tests/e2e/test_history_doc.py::test_the_page_shows_what_its_writes_record_and_get_history_answers": [
        '{"label": "Person", "merge_keys": {"name": "Ada"}, "properties": {"age": 36}, "source": "crm", '
        '"extraction_method": "api"}',
        '{"label": "Person", "merge_keys": {"name": "Ada"}, "properties": {"age": 37, "city": "Oslo"}, '
        '"source": "crm", "extraction_method": "api"}',
        "second-record",
        "get-history",
    ],
    "tests/e2e/test_semantic_search.py::test_write_node_embeds_the_entry_s_fields_and_replaces_only_what_changed": [
        "semantic-entry"
    ],
    "test_spaces_example": [
        *SPACES_COMMANDS,
        "spaces-agents",
        "call:write_node#spaces",
        "answer:write_node#spaces",
        "answer:read_graph#spaces-bob",
        *(f"{kind}:read_graph#spaces-{who}" for who in ("lead", "refused") for kind in ("call", "answer")),
    ],
}

CLAUDE_CODE = "claude mcp add write-gate -- uv --directory /path/to/write-gate run write-gate serve"

# What cannot run here: why, and which test checks it as far as it can.
EXEMPT = {
    "Write Gate console, as agent 'console'. Open this link (it works once):": "what `write-gate console` prints; "
    "tests/e2e/test_console.py::test_the_console_command_opens_once_by_its_printed_link starts it and opens the link",
    "uv run pytest": "the suite itself; running it from inside the suite would recurse",
    "WRITE_GATE_HISTORY_ROUNDS=30 uv run pytest -m history -n 3 -rA tests/e2e/test_history_chains.py": "the history "
    "check's full form (about nine minutes); the suite runs tests/e2e/test_history_chains.py in its bounded form",
    "uv run mkdocs serve": "serves until stopped; tests/e2e/test_docs_site.py builds the same site with --strict",
    CLAUDE_CODE: "no Claude Code here; test_claude_code_line_is_the_desktop_entry checks it starts the server the "
    "Claude Desktop entry starts, which test_claude_desktop_config_starts_the_server runs",
    "docker compose up": "no Docker here; test_compose_commands checks the files and services it names",
    "MEMGRAPH_USER=gate MEMGRAPH_PASSWORD=... docker compose -f docker-compose.yml -f docker-compose.publish-bolt.yml "
    "up --build": "no Docker here; test_compose_commands checks the files and the variables it names",
    f"{MEMGRAPH_ENV} uv run write-gate migrate": "bolt://db:7687 is the reader's; test_memgraph_commands runs it "
    "against the Bolt tier",
    f"{MEMGRAPH_ENV} WRITE_GATE_AGENTS_FILE=agents.toml uv run write-gate serve --transport http": "bolt://db:7687 "
    "is the reader's and serve runs until stopped; test_memgraph_commands checks the settings and arguments it gives",
}


def defined(test: str) -> bool:
    """A RUN name: a test of this module, or `tests/<path>.py::test_name` in another."""
    if "::" not in test:
        return test in globals()
    path, name = test.split("::")
    return hasattr(importlib.import_module(path.removesuffix(".py").replace("/", ".")), name)


def test_every_block_is_run_or_exempt() -> None:
    found = rb.ids(rb.blocks())
    run = [key for keys in RUN.values() for key in keys]
    assert len(found) == len(set(found)), "two blocks share a key: give one a <!-- readme-test: ID --> marker"
    assert len(run) == len(set(run)) and not set(run) & set(EXEMPT)
    where = {key: b.where for b in rb.blocks() for key in rb.ids([b])}
    unrun = sorted((where[key], key) for key in set(found) - set(run) - set(EXEMPT))
    assert unrun == [], f"blocks no test runs (add them to RUN or EXEMPT): {unrun}"
    gone = (set(run) | set(EXEMPT)) - set(found)
    assert gone == set(), f"RUN or EXEMPT name blocks no page has: {gone}"
    missing = [test for test in RUN if not defined(test)]
    assert missing == [], f"RUN names tests that do not exist: {missing}"


def test_every_marker_names_a_block() -> None:
    """A `readme-test` marker stands on the line right before a fence: one elsewhere names nothing, and the block
    it meant would go by its first line."""
    for path, n, key in rb.markers():
        lines = rb.text_of(path).splitlines()
        assert n < len(lines) and lines[n].lstrip().startswith("```"), f"{path.relative_to(ROOT)} line {n}: {key}"


# --- helpers -------------------------------------------------------------------------------------------


async def write_gate(settings: Settings, command: str, cwd: Path, **env: str) -> tuple[int, str]:
    """A README line, `[VAR=value ...] [uv run] write-gate ...`, run against the test's graph in this process
    (tests/conftest.py's run_write_gate: the console script's own `main`, without an interpreter's start-up per
    line; `uv run` itself is run for real by test_first_command_serves). Its variables win over the test's;
    returns the exit code and what it printed."""
    words = rb.argv(command)
    while "=" in words[0]:
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    if words[:2] == ["uv", "run"]:
        words = words[2:]
    assert words[0] == "write-gate", command
    environment = {**settings_env(settings), **env}
    done = await anyio.to_thread.run_sync(lambda: run_write_gate(*words[1:], env=environment, cwd=cwd))
    return done.returncode, done.stdout


def json_block(key: str) -> Any:
    return json.loads(rb.block(key).text)


def link_schemas(folder: Path) -> None:
    """A working folder where the README's relative `schemas/...` paths mean the shipped ones."""
    (folder / "schemas").symlink_to(ROOT / "schemas")


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert result.structured_content is not None
    return result.structured_content


# --- the tool calls ---------------------------------------------------------------------------------------


@EMBEDDED
async def test_provenance_call_filters_as_described(settings: Settings, graph: GraphBackend) -> None:
    """The provenance example: Alice's age from api-bot, her nickname from llm-bot at 0.06; the call answers her
    with each value's claim, and a filter no single value meets answers nobody."""
    await migrate(graph)
    writes = [
        ("api-bot", {"age": 36}, {"source": "api", "extraction_method": "manual", "reliability": 1.0}),
        ("llm-bot", {"nickname": "Al"}, {"source": "llm", "extraction_method": "llm", "reliability": 0.1}),
    ]
    for agent, properties, prov in writes:
        async with open_client(settings.model_copy(update={"agent": agent}), "in_process") as client:
            node = {"label": "Person", "merge_keys": {"name": "Alice"}, "properties": properties, **prov}
            assert (await call(client, "write_node", node))["status"] == "written"
    request = json_block("call:open_nodes_provenance")
    async with open_client(settings, "in_process") as client:
        [alice] = (await call(client, "open_nodes", request))["entities"]
        assert alice["provenance"]["age"]["agent"] == "api-bot"
        assert alice["provenance"]["nickname"]["agent"] == "llm-bot"
        stricter = {**request, "provenance": {**request["provenance"], "min_confidence": 0.75}}
        assert (await call(client, "open_nodes", stricter))["entities"] == []


@EMBEDDED
async def test_change_feed_example(settings: Settings, graph: GraphBackend) -> None:
    """The change feed example: a session subscribes as shown, notes-bot writes Ada twice from another gate, the
    session is sent the notification shown, and changes_since answers both changes as shown."""
    await migrate(graph)
    feed = settings.model_copy(update={"change_settle_seconds": 0})  # no wait for the horizon here
    heard: list[types.ResourceUpdatedNotification] = []
    arrived = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            heard.append(message)
            arrived.set()

    subscribe = json_block("subscribe#feed")
    assert subscribe["method"] == "resources/subscribe"
    with warnings.catch_warnings():  # the SDK warns resources/subscribe is gone from protocol 2026-07-28 on
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        server = build_server(feed, auto_migrate=False)
        async with Client(server, mode="legacy", message_handler=on_message) as listener:
            await listener.subscribe_resource(subscribe["params"]["uri"])
            async with open_client(feed.model_copy(update={"agent": "notes-bot"}), "in_process") as writer:
                for age in (36, 37):
                    node = {"label": "Person", "merge_keys": {"name": "Ada"}, "properties": {"age": age}}
                    await call(writer, "write_node", {**node, "source": "wiki", "extraction_method": "manual"})
            with anyio.fail_after(60):
                await arrived.wait()
            answer = await call(listener, "changes_since", json_block("call:changes_since#feed"))
    params = heard[0].params.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert {"jsonrpc": "2.0", "method": heard[0].method, "params": params} == json_block("notification#feed")
    rb.assert_matches(answer, json_block("answer:changes_since#feed"), "changes_since example")


@EMBEDDED
async def test_listen_example(settings: Settings, graph: GraphBackend) -> None:
    """The listen snippet, run as written by a client in the SDK's default mode while another gate writes a
    Person: it prints the event its comment shows."""
    await migrate(graph)
    snippet = rb.block("listen#feed").text
    shown = re.search(r"# (ResourceUpdated\(.*?\))", snippet)
    assert shown is not None
    body = "".join(f"    {line}\n" for line in snippet.splitlines())
    namespace: dict[str, Any] = {}
    exec(f"async def listening(client):\n{body}", namespace)  # noqa: S102 - the README's own snippet
    printed = io.StringIO()
    async with (
        open_client(settings.model_copy(update={"agent": "notes-bot"}), "in_process") as writer,
        Client(build_server(settings, auto_migrate=False)) as client,
        anyio.create_task_group() as tasks,
    ):
        assert client.protocol_version == "2026-07-28"
        with contextlib.redirect_stdout(printed), anyio.fail_after(60):
            tasks.start_soon(namespace["listening"], client)
            for age in itertools.count():  # a write before the stream is acknowledged is not heard: write again
                node = {"label": "Person", "merge_keys": {"name": "Ada"}, "properties": {"age": age}}
                await call(writer, "write_node", {**node, "source": "wiki", "extraction_method": "manual"})
                await anyio.sleep(0.3)
                if printed.getvalue():
                    break
    assert printed.getvalue().strip() == shown.group(1)


@EMBEDDED
async def test_list_conflicts_example(settings: Settings, graph: GraphBackend) -> None:
    """The list_conflicts example: a keep_both conflict on Ada's age (api-bot's 36 against llm-bot's 99), recorded
    as the write path records one (core.history), is what the call answers; the other statuses do not list it."""
    await migrate(graph)
    current = ValueProvenance(agent="api-bot", source="api", extraction_method="manual", confidence=1.0, at=NOW)
    incoming = ValueProvenance(agent="llm-bot", source="llm", extraction_method="llm", confidence=0.06, at=NOW)
    conflict = Conflict("age", ConflictPolicy.KEEP_BOTH, Outcome.OPEN, 36, current, 99, incoming)
    records = conflict_records(Subject.node("Person", identity_key({"name": "Ada"})), [conflict], "w1", NOW, ["k1"])
    text = f"UNWIND $r AS r CREATE (c:WriteGateConflict) SET c += r, {numbered('c', 'r.at')}"  # as writes do
    await graph.write(Statement(text, {"r": records}))
    request = json_block("call:list_conflicts#open")
    async with open_client(settings, "in_process") as client:
        answer = await call(client, "list_conflicts", request)
        settled = await call(client, "list_conflicts", {**request, "status": "settled"})
    rb.assert_matches(answer, json_block("answer:list_conflicts#open"), "list_conflicts example")
    assert settled["conflicts"] == []


async def test_ranked_search_example(settings: Settings, graph: GraphBackend) -> None:
    """The ranked search example: the three people the text names, then the call, answered as shown."""
    await migrate(graph)
    people = {
        "Ada Lovelace": ["wrote the first program", "worked with Charles Babbage"],
        "Charles Babbage": ["designed the analytical engine"],
        "Grace Hopper": ["wrote the first compiler"],
    }
    async with open_client(settings, "in_process") as client:
        for name, observations in people.items():
            args = {
                "label": "Person",
                "merge_keys": {"name": name},
                "properties": {"observations": observations},
                "source": "wiki",
                "extraction_method": "manual",
            }
            await call(client, "write_node", args)
        answer = await call(client, "search_nodes_ranked", json_block("call:search_nodes_ranked#ranked"))
    rb.assert_matches(answer, json_block("answer:search_nodes_ranked#ranked"), "ranked search example")


async def test_stats_and_saved_searches_example(settings: Settings, graph: GraphBackend) -> None:
    """The statistics and saved searches example: the graph the text names, written by the agent it names, then
    each call, answered as shown."""
    await migrate(graph)
    written = {"Ada Lovelace": "Person", "Grace Hopper": "Person", "Analytical Engine": "Project"}
    async with open_client(settings.model_copy(update={"agent": "notes-bot"}), "in_process") as client:
        for name, label in written.items():
            args = {"label": label, "merge_keys": {"name": name}, "source": "wiki", "extraction_method": "manual"}
            await call(client, "write_node", args)
        link = {
            "type": "WORKS_ON",
            "from_label": "Person",
            "from_keys": {"name": "Ada Lovelace"},
            "to_label": "Project",
            "to_keys": {"name": "Analytical Engine"},
            "source": "letters",
            "extraction_method": "manual",
        }
        await call(client, "write_relationship", link)
        for tool in STATS_TOOLS:
            answer = await call(client, tool, json_block(f"call:{tool}#stats"))
            rb.assert_matches(answer, json_block(f"answer:{tool}#stats"), f"{tool} example")


@EMBEDDED
async def test_knowledge_tools_example(settings: Settings, graph: GraphBackend) -> None:
    """The knowledge tools' examples, in order, on a freshly migrated graph (the bundled memory schema registers
    CHILD_OF): Ada, Math and Grace written as the text says, Grace's parent set to Ada before the reads, and the
    archive's dry run, which the text says answers the same, before the archive."""
    await migrate(graph)
    async with open_client(settings, "in_process") as client:
        for name in ("Ada", "Math", "Grace"):
            node = {"label": "Person", "merge_keys": {"name": name}, "source": "wiki", "extraction_method": "manual"}
            await call(client, "write_node", node)
        for tool in KNOWLEDGE_EXAMPLES:
            shown = json_block(f"answer:{tool}#knowledge")
            if tool == "get_parent":
                await call(client, "set_entity_parent", {"entityName": "Grace", "parentName": "Ada"})
            if tool == "archive_entities":
                dry = await call(client, tool, {**json_block(f"call:{tool}#knowledge"), "dryRun": True})
                rb.assert_matches(dry, {**shown, "dryRun": True}, "archive dry run")
                assert (await call(client, "get_parent", {"entityName": "Ada"}))["parent"]["name"] == "Math"
            answer = await call(client, tool, json_block(f"call:{tool}#knowledge"))
            rb.assert_matches(answer, shown, f"{tool} example")
        ranked = await call(client, "search_nodes_ranked", {"query": "tag:pioneer"})
        assert [hit["entity"]["name"] for hit in ranked["results"]] == ["Ada"]


def timeless(turtle: str) -> set[tuple[Any, Any, Any]]:
    """A Turtle text's triples with every time (an xsd:dateTime, and a write's IRI, which ends in one) made one."""

    def term(t: Any) -> Any:
        if isinstance(t, Literal) and t.datatype == rdf_namespace.XSD.dateTime:
            return Literal("a time")
        if isinstance(t, URIRef) and "/write/" in t:
            return URIRef(t.split("/write/")[0] + "/write/a-time")
        return t

    return {(term(s), term(p), term(o)) for s, p, o in Graph().parse(data=turtle, format="turtle")}


@EMBEDDED
async def test_prov_example(settings: Settings, graph: GraphBackend) -> None:
    """The PROV-O example: crawler writes Ada's birth year from the letters, then analyst her field from the notes;
    every triple of the excerpt is in the answer (times aside), and the SPARQL line answers as the README says."""
    await migrate(graph)
    for agent, properties, source in (("crawler", {"born": 1815}, "letters"), ("analyst", {"field": "maths"}, "notes")):
        node = {"label": "Person", "merge_keys": {"name": "Ada"}, "properties": properties}
        stamp = {"source": source, "extraction_method": "manual", "reliability": 0.9}
        async with open_client(settings.model_copy(update={"agent": agent}), "in_process") as client:
            await call(client, "write_node", {**node, **stamp})
    async with open_client(settings, "in_process") as client:
        answer = await call(client, "export_graph", json_block("call:export_graph#prov"))
    rb.assert_matches(answer, json_block("answer:export_graph#prov"), "PROV example")
    exported = timeless(answer["content"])
    assert timeless(rb.block("turtle:prov-excerpt").text) - exported == set()
    page = rb.text_of(rb.block("turtle:prov-excerpt").path)
    query = re.search(r"`(SELECT \?value \?agent WHERE [^`]+)`", page).group(1)
    prefixes = "PREFIX prov: <http://www.w3.org/ns/prov#>\nPREFIX wg: <urn:write-gate:vocab#>\n"
    said = {(str(v), str(a)) for v, a in Graph().parse(data=answer["content"], format="turtle").query(prefixes + query)}
    assert said == {
        ("born", "urn:write-gate:agent:crawler"),
        ("field", "urn:write-gate:agent:analyst"),
        ("name", "urn:write-gate:agent:crawler"),
    }


@EMBEDDED
async def test_export_example(settings: Settings, graph: GraphBackend) -> None:
    """The export example: a Person and a Project both named Mercury, tagged astro and related, and an untagged
    Person the filter leaves out; the two Mercurys are two entities with their own ids, and the relation names
    which is which."""
    await migrate(graph)
    async with open_client(settings, "in_process") as client:
        for label, name, tags in (
            ("Person", "Mercury", ["astro"]),
            ("Project", "Mercury", ["astro"]),
            ("Person", "Ada", []),
        ):
            node = {"label": label, "merge_keys": {"name": name}, "properties": {"tags": tags}}
            stamp = {"source": "notes", "extraction_method": "manual", "reliability": 0.9}
            await call(client, "write_node", {**node, **stamp})
        relation = {"type": "WORKS_ON", "from_label": "Person", "to_label": "Project"}
        ends = {"from_keys": {"name": "Mercury"}, "to_keys": {"name": "Mercury"}}
        await call(client, "write_relationship", {**relation, **ends, "source": "notes", "extraction_method": "manual"})
        answer = await call(client, "export_graph", json_block("call:export_graph#export"))
    rb.assert_matches(answer, json_block("answer:export_graph#export"), "export example")
    document = json.loads(answer["content"])
    assert [e["id"] for e in document["entities"]] == ['Person:{"name":"Mercury"}', 'Project:{"name":"Mercury"}']
    [works] = document["relations"]
    assert (works["from"], works["to"]) == ("Mercury", "Mercury")
    assert (works["from_id"], works["to_id"]) == ('Person:{"name":"Mercury"}', 'Project:{"name":"Mercury"}')


@EMBEDDED
async def test_quarantine_example(settings: Settings, graph: GraphBackend, tmp_path: Path) -> None:
    """The quarantine's worked example: fleet-a's vehicle rejected and kept, listed, then written by the replay
    after the schema load, as fleet-a, and gone from the quarantine."""
    await migrate(graph)
    settings = settings.model_copy(update={"unknown_label_policy": UnknownLabelPolicy.REJECT})
    async with open_client(settings.model_copy(update={"agent": "fleet-a"}), "in_process") as fleet:
        answer = await call(fleet, "write_node", json_block("call:write_node#quarantine"))
        rb.assert_matches(answer, json_block("answer:write_node#quarantine"), "write_node example")
    async with open_client(settings.model_copy(update={"agent": "operator"}), "in_process") as operator:
        listed = await call(operator, "list_quarantine", json_block("call:list_quarantine#quarantine"))
        rb.assert_matches(listed, json_block("answer:list_quarantine#quarantine"), "list_quarantine example")
        (tmp_path / "my-schemas").mkdir()
        (tmp_path / "my-schemas" / "vehicle.json").write_text(rb.block("my-schemas/vehicle.json").text)
        command = "write-gate schema load my-schemas/vehicle.json"
        assert rb.sh_block(command) and (await write_gate(settings, command, tmp_path))[0] == 0
        await call(operator, "refresh_schema_cache", {})
        replayed = await call(operator, "replay_quarantine", json_block("call:replay_quarantine#quarantine"))
        rb.assert_matches(replayed, json_block("answer:replay_quarantine#quarantine"), "replay_quarantine example")
        assert (await call(operator, "list_quarantine", {}))["entries"] == []
    rows = await graph.read(Statement("MATCH (v:Vehicle) RETURN v.plate AS plate, v.written_by AS agent"))
    assert [(row["plate"], row["agent"]) for row in rows] == [("AB-123", "fleet-a")]


async def test_import_graph_example(settings: Settings, graph: GraphBackend) -> None:
    """The import_graph example: Alice's two lines under merge, answered as shown, and Alice as the text says."""
    await migrate(graph)
    async with open_client(settings, "in_process") as client:
        answer = await call(client, "import_graph", json_block("call:import_graph#merge"))
        [alice] = (await call(client, "open_nodes", {"names": ["Alice"]}))["entities"]
    rb.assert_matches(answer, json_block("answer:import_graph#merge"), "import_graph example")
    assert alice["observations"] == ["likes tea", "plays chess"]
    assert (alice["properties"]["tags"], alice["properties"]["importance"]) == (["tea"], 7)


@EMBEDDED
async def test_safe_retries_example(settings: Settings, graph: GraphBackend) -> None:
    """Alice works for Acme with weight 1.0; the keyed call averages it to 0.6 once, and its repeat answers the
    same, marked as a replay, leaving 0.6."""
    await migrate(graph)
    async with open_client(settings, "in_process") as client:
        link = {k: v for k, v in json_block("call:write_relationship#retry").items() if k != "idempotency_key"}
        for label, name in (("Person", "Alice"), ("Organization", "Acme")):
            node = {"label": label, "merge_keys": {"name": name}, "source": "hr", "extraction_method": "api"}
            await call(client, "write_node", node)
        await call(client, "write_relationship", {**link, "weight": 1.0})
        first = await call(client, "write_relationship", json_block("call:write_relationship#retry"))
        repeat = await client.call_tool("write_relationship", json_block("call:write_relationship#retry"))
    rb.assert_matches(first, json_block("answer:write_relationship#retry"), "safe retries example")
    assert repeat.structured_content == first
    shown = json_block("meta:write_relationship#retry")
    assert {k: v for k, v in (repeat.meta or {}).items() if k in shown} == shown
    rows = await graph.read(Statement("MATCH (:Person {name: 'Alice'})-[r:WORKS_FOR]->() RETURN r.weight AS w"))
    assert [row["w"] for row in rows] == [pytest.approx(0.6)]


@EMBEDDED
async def test_limits_per_agent_example(settings: Settings, graph: GraphBackend, tmp_path: Path) -> None:
    """The agents file shown (its token hash aside) limits the importer: two writes pass, the third is refused as
    shown (the wait counted from the first write, so a little under 30 seconds on a slow machine)."""
    await migrate(graph)
    shown = tomllib.loads(rb.block("agents:limits").text)
    shown["agents"]["importer"]["token_sha256"] = "0" * 64
    path = tmp_path / "agents.toml"
    path.write_text(json.dumps(shown))
    path = path.rename(tmp_path / "agents.json")
    limited = settings.model_copy(update={"agents_file": path, "agent": "importer"})
    async with open_client(limited, "in_process") as client:
        for name in ("Ada", "Bob"):
            args = {"label": "Person", "merge_keys": {"name": name}, "source": "csv", "extraction_method": "api"}
            await call(client, "write_node", args)
        refused = await call(client, "write_node", {**args, "merge_keys": {"name": "Cy"}})
    wait = refused["details"]["retry_after_seconds"]
    assert 25 < wait <= 30 and refused["message"].endswith(f"retry in {wait:g} seconds")
    expected = json_block("answer:write_node#limited")
    expected["details"]["retry_after_seconds"], expected["message"] = wait, refused["message"]
    rb.assert_matches(refused, expected, "limits per agent example")


@EMBEDDED
async def test_import_and_backup_commands(settings: Settings, graph: GraphBackend, tmp_path: Path) -> None:
    """The section's commands as shown: a dry run of a csv import, then a backup of the graph restored into an
    empty one, which then holds the same nodes."""
    await migrate(graph)
    (tmp_path / "people.csv").write_text("# ENTITIES\nname,entityType,observations\nAda,Person,counts\n")
    [dry, backup, restore] = rb.commands(rb.sh_block("write-gate backup graph.backup.jsonl"))
    code, _ = await write_gate(settings, dry, tmp_path)
    assert code == 0 and await graph.read(Statement("MATCH (n:Person) RETURN n")) == []  # a dry run
    assert (await write_gate(settings, backup, tmp_path))[0] == 0
    empty = settings.model_copy(update={"graph_name": settings.graph_name + "_restored"})
    assert (await write_gate(empty, restore, tmp_path))[0] == 0
    count = Statement("MATCH (n) RETURN count(n) AS n")
    restored = await open_backend(empty)
    try:
        assert await restored.read(count) == await graph.read(count)
    finally:
        await restored.close()


@EMBEDDED
async def test_tool_calls_answer_as_shown(settings: Settings, graph: GraphBackend, tmp_path: Path) -> None:
    """Each answer block, in reading order (the README, then the pages), is what the server answers to its call
    block (or implied call), through a real MCP client session on a freshly migrated graph as `write-gate serve`
    makes it; then the README's refused call."""
    await migrate(graph)
    # The typed tools (add_npc) are listed as their page says: with `--toolsets typed`.
    async with open_client(settings.model_copy(update={"toolsets": "typed"}), "in_process") as client:
        # `answer:<tool>#<example>`: a section's own example, run by its own test (its registry differs).
        answers = [b for b in rb.blocks() if b.key.startswith("answer:") and "#" not in b.key]
        assert [b.key for b in answers] == [
            "answer:write_node", "answer:write_relationship", "answer:write_nodes",
            "answer:refresh_schema_cache", "answer:add_npc", "answer:search_nodes", "answer:find_duplicates",
            "answer:merge_entities", "answer:get_history",
        ]  # fmt: skip
        for answer in answers:
            tool = answer.key.removeprefix("answer:")
            if tool == "add_npc":
                await load_npc_and_rivendell(settings, client, tmp_path)
            if tool == "search_nodes":
                # The shown entity has an observation the README's write_node did not give: add it as a user would.
                alice = {**json_block("call:write_node"), "properties": {"age": 30, "observations": ["Likes tea"]}}
                assert (await call(client, "write_node", alice))["status"] == "written"
            if tool == "find_duplicates":
                await acme_and_acmee(client)
            request = IMPLIED_REQUESTS[tool] if tool in IMPLIED_REQUESTS else json_block(f"call:{tool}")
            rb.assert_matches(await call(client, tool, request), json.loads(answer.text), answer.where)
        # The README's third call: a type nobody registered, refused.
        refused = await client.call_tool("write_relationship", json_block("call:write_relationship#refused"))
        assert refused.is_error and refused.structured_content is not None
        rb.assert_matches(refused.structured_content, json_block("answer:write_relationship#refused"), "refused")
        assert "WORKS_FOR" in refused.structured_content["details"]["known_types"]


async def acme_and_acmee(client: Client) -> None:
    """The duplicates example's setting, as its text describes it: Acme (from the write_relationship example)
    and Acmee with their urls, Alice working for both, Bob for Acmee."""
    prov = {"source": "crm", "extraction_method": "manual"}
    for name, props in (
        ("Acme", {"url": "https://acme.example"}),
        ("Acmee", {"url": "https://acme.example/", "founded": 1990}),
    ):
        node = {"label": "Organization", "merge_keys": {"name": name}, "properties": props, **prov}
        assert (await call(client, "write_node", node))["status"] == "written"
    for person, since in (("Alice", 2021), ("Bob", None)):
        rel = {
            "type": "WORKS_FOR",
            "from_label": "Person",
            "from_keys": {"name": person},
            "to_label": "Organization",
            "to_keys": {"name": "Acmee"},
            "properties": {"since": since} if since else {},
            **prov,
        }
        assert (await call(client, "write_relationship", rel))["status"] == "written"


async def load_npc_and_rivendell(settings: Settings, client: Client, tmp_path: Path) -> None:
    """The add_npc example's setting: the README's Npc entry loaded with `write-gate schema load`, the typed
    tools refreshed, and the Location it names written."""
    path = tmp_path / "my-schemas" / "npc.json"
    path.parent.mkdir()
    path.write_text(rb.block("my-schemas/npc.json").text)
    assert (await write_gate(settings, f"write-gate schema load {path}", tmp_path))[0] == 0
    assert (await call(client, "refresh_schema_cache", {}))["status"] == "refreshed"
    assert "add_npc" in {tool.name for tool in (await client.list_tools()).tools}
    rivendell = {"label": "Location", "merge_keys": {"name": "Rivendell"}, "source": "dm-notes",
                 "extraction_method": "manual"}  # fmt: skip
    assert (await call(client, "write_node", rivendell))["status"] == "written"


@EMBEDDED
async def test_property_names_example(settings: Settings, graph: GraphBackend, tmp_path: Path) -> None:
    """The Property names section: its registry file loaded with `write-gate schema load`, then each write_node
    call answers as shown, and the graph holds what the section says."""
    await migrate(graph)
    path = tmp_path / "my-schemas" / "contacts.json"
    path.parent.mkdir()
    path.write_text(rb.block("my-schemas/contacts.json").text)
    assert (await write_gate(settings, f"write-gate schema load {path}", tmp_path))[0] == 0
    async with open_client(settings, "in_process") as client:
        for example in PROPERTY_EXAMPLES:
            answer = rb.block(f"answer:write_node#{example}")
            result = await client.call_tool("write_node", json_block(f"call:write_node#{example}"))
            assert result.structured_content is not None
            rb.assert_matches(result.structured_content, json.loads(answer.text), answer.where)
    rows = await graph.read(Statement("MATCH (n:Contact) RETURN properties(n) AS p"))
    [node] = [row["p"] for row in rows]
    assert (node["name"], node["age"], node["email"]) == ("Ann", 41, "ann@example.org")
    assert node["_schema_property_remaps"] == ["Name→name", "Age→age", "Mail→email"]
    assert not {"Name", "Age", "Mail", "nickname"} & set(node)


@EMBEDDED
async def test_conflicts_example(settings: Settings, graph: GraphBackend, tmp_path: Path) -> None:
    """The Conflicts section's worked example, as api-bot and llm-bot: each answer and refusal as the section
    tells it, and resolve_conflict writing the held value with its own claim."""
    await migrate(graph)
    path = tmp_path / "my-schemas" / "people.json"
    path.parent.mkdir()
    path.write_text(rb.block("my-schemas/people.json").text)
    assert (await write_gate(settings, f"write-gate schema load {path}", tmp_path))[0] == 0
    alice = json_block("call:write_node#conflict-api")
    guess = json_block("call:write_node#conflict-kept")
    async with (
        open_client(settings.model_copy(update={"agent": "api-bot"}), "in_process") as api_bot,
        open_client(settings.model_copy(update={"agent": "llm-bot"}), "in_process") as llm_bot,
    ):
        first = (await api_bot.call_tool("write_node", alice)).structured_content
        assert first is not None and "conflicts" not in first
        kept = (await llm_bot.call_tool("write_node", guess)).structured_content
        answer = rb.block("answer:write_node#conflict-kept")
        rb.assert_matches(kept, json.loads(answer.text), answer.where)
        email = await llm_bot.call_tool("write_node", {**guess, "properties": {"email": "al@guess.example"}})
        refused = email.structured_content or {}
        assert email.is_error and refused["error_code"] == "CONFLICT"
        [conflict] = refused["details"]["conflicts"]
        assert (conflict["property"], conflict["current_value"], conflict["current"]["agent"]) == (
            "email",
            "alice@example.org",
            "api-bot",
        )
        held = (await llm_bot.call_tool("write_node", {**guess, "properties": {"city": "Rome"}})).structured_content
        assert held is not None
        [met] = held["conflicts"]
        assert (met["outcome"], met["current_value"]) == ("open", "Oslo")
        request = {**json_block("call:resolve_conflict#conflict"), "conflict_id": met["conflict_id"]}
        resolved = (await api_bot.call_tool("resolve_conflict", request)).structured_content
        assert resolved is not None and resolved["value"] == "Rome"
        assert (resolved["claim"]["agent"], resolved["claim"]["source"], resolved["claim"]["confidence"]) == (
            "llm-bot",
            "llm",
            0.06,
        )
    rows = await graph.read(Statement("MATCH (n:Person {name: 'Alice'}) RETURN properties(n) AS p"))
    node = rows[0]["p"]
    assert (node["age"], node["email"], node["city"]) == (36, "alice@example.org", "Rome")


@EMBEDDED
async def test_conflict_policies_example(settings: Settings, graph: GraphBackend, tmp_path: Path) -> None:
    """The Conflict policies section: its file loads with `write-gate schema load`, and get_schema shows the entry's
    policy and half-life, the property's own policy, and the gate's defaults."""
    path = tmp_path / "my-schemas" / "ledger.json"
    path.parent.mkdir()
    path.write_text(rb.block("my-schemas/ledger.json").text)
    assert (await write_gate(settings, f"write-gate schema load {path}", tmp_path))[0] == 0
    async with open_client(settings, "in_process") as client:
        schema = await call(client, "get_schema", {})
    [account] = [entry for entry in schema["node_labels"] if entry["name"] == "Account"]
    assert (account["conflict_policy"], account["half_life_days"]) == ("keep_both", 30.0)
    assert account["property_types"]["balance"]["conflict_policy"] == "reject"
    assert schema["conflict_policy"] == "last_writer_wins" and schema["decay_half_life_days"] == {}
    assert schema["history_retention_days"] == 365.0


# --- the shell commands ------------------------------------------------------------------------------------


@EMBEDDED
async def test_first_command_serves(settings: Settings) -> None:
    """`uv run write-gate serve` from the checkout answers a real client with the gate profile's tools."""
    argv = rb.argv(rb.commands(rb.sh_block("uv run write-gate serve"))[0])
    env = {**settings_env(settings), "UV_FROZEN": "1"}
    server = StdioServerParameters(command=UV, args=argv[1:], env=env, cwd=ROOT)
    async with Client(server, read_timeout_seconds=120) as client:
        assert {tool.name for tool in (await client.list_tools()).tools} == GATE_DEFAULT_TOOLS


@EMBEDDED
async def test_rpg_examples_load(settings: Settings) -> None:
    command = "uv run write-gate schema load schemas/examples/rpg"
    assert rb.commands(rb.sh_block(command)) == [command]
    code, out = await write_gate(settings, command, ROOT)
    # 11 types and the 7 relationship types they use, but the memory registry's LOCATED_IN, which they only imply
    assert code == 0 and "loaded 17 registry entries; kept the registered LOCATED_IN" in out


MEMORY_JSONL = "\n".join(
    json.dumps(line)
    for line in [
        {"type": "entity", "name": "Alice", "entityType": "person", "observations": ["Likes tea"]},
        {"type": "entity", "name": "Acme", "entityType": "company", "observations": []},
        {"type": "relation", "from": "Alice", "to": "Acme", "relationType": "works at"},
    ]
)
# The synopsis's placeholders, as a reader would fill them in.
PLACEHOLDERS = {"NAME": "bot"}


def synopsis_parts(command: str) -> tuple[list[str], list[list[str]]]:
    """`write-gate a b [--x V] [--y a|b]` -> the command without its options, and each bracketed option."""
    options = [group.split() for group in re.findall(r"\[([^\]]+)\]", command)]
    bare = re.sub(r"\s*\[[^\]]+\]", "", command)
    return [PLACEHOLDERS.get(word, word) for word in rb.argv(bare)], options


def subparser(words: list[str]) -> Any:
    """The argparse parser of `write-gate <words...>`, following sub-commands."""
    current = cli.parser()
    for word in words[1:]:
        actions = [a for a in current._actions if a.__class__.__name__ == "_SubParsersAction"]
        if not actions or word not in actions[0].choices:
            break
        current = actions[0].choices[word]
    return current


def assert_options_exist(command: str) -> None:
    """Every option the synopsis shows exists, takes a value exactly when one is shown, with the choices shown."""
    words, options = synopsis_parts(command)
    parser = subparser(words)
    by_flag = {flag: action for action in parser._actions for flag in action.option_strings}
    for flag, *value in options:
        assert flag in by_flag, f"{command}: {flag} is not an option of {' '.join(words[:3])}"
        action = by_flag[flag]
        assert (action.nargs != 0) == bool(value), f"{command}: {flag} takes a value: {action.nargs != 0}"
        if value and "|" in value[0]:
            assert set(value[0].split("|")) == set(action.choices), f"{command}: {flag} offers {action.choices}"


@EMBEDDED
async def test_commands_table(settings: Settings, graph: GraphBackend, tmp_path: Path) -> None:
    """The Commands block: each synopsis's options are the parser's, and each line runs, without its optional
    parts, against a fresh graph, with the README's extra.json and an official memory file where it names them."""
    link_schemas(tmp_path)
    (tmp_path / "my-schemas").mkdir()
    (tmp_path / "my-schemas" / "extra.json").write_text(rb.block("my-schemas/extra.json").text)
    (tmp_path / "memory.jsonl").write_text(MEMORY_JSONL + "\n")
    for command in rb.commands(rb.sh_block("write-gate migrate")):
        assert_options_exist(command)
        words, _ = synopsis_parts(command)
        if words[1] == "serve":
            continue  # runs until stopped: test_first_command_serves and the client config start it
        agents = str(tmp_path / "agents.toml")  # where `agents add` and `remove` find the file without --file
        line = " ".join(words)
        # A restore writes into an empty graph only: the backup line's file, restored into a second graph.
        target = settings.model_copy(update={"graph_name": settings.graph_name + "_restored"})
        target = target if words[1] == "restore" else settings
        assert (await write_gate(target, line, tmp_path, WRITE_GATE_AGENTS_FILE=agents))[0] == 0, line
    # What the lines did, in the graph and the files: the extra entries loaded beside the core ones, the import.
    names = {row["name"] for row in await graph.read(Statement("MATCH (s:Schema) RETURN s.name AS name"))}
    assert {"Team", "COACHES", "Person", "WORKS_FOR"} <= names
    people = await graph.read(Statement("MATCH (p:Person {name: 'Alice'})-[:WORKS_FOR]->(o) RETURN o.name AS o"))
    assert people == [{"o": "Acme"}]
    assert "bot" not in (tmp_path / "agents.toml").read_text()  # added, then removed


@EMBEDDED
async def test_agents_commands_write_the_file_shown(settings: Settings, tmp_path: Path) -> None:
    """The two `agents add` lines, run as shown, write the agents file the toml block shows (hashes aside)."""
    for command in rb.commands(rb.sh_block(f"{AGENTS_ADD} analyst --grant reader --file agents.toml")):
        code, out = await write_gate(settings, command, tmp_path)
        assert code == 0 and re.fullmatch(r"wg_\S+\n", out)  # the token, printed once, as the block shows it
    written = tomllib.loads((tmp_path / "agents.toml").read_text())
    shown = tomllib.loads(rb.block("[agents.crawler]").text)
    for agents in (written, shown):
        for agent in agents["agents"].values():
            assert re.fullmatch(r"[0-9a-f]{4}(\.\.\.|[0-9a-f]{60})", agent.pop("token_sha256"))
    assert written == shown


def served(settings: Settings, command: str) -> Client:
    """A README `[VAR=value ...] uv run write-gate serve ...` line as a stdio server against the test's graph
    (the console script itself: test_first_command_serves runs `uv run` for real)."""
    words = rb.argv(command)
    env = settings_env(settings)
    while "=" in words[0]:
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    assert words[:3] == ["uv", "run", "write-gate"], command
    executable, *args = write_gate_argv(*words[3:])
    return Client(StdioServerParameters(command=executable, args=args, env=env), read_timeout_seconds=120)


@EMBEDDED
async def test_formula_provider_examples(settings: Settings, graph: GraphBackend) -> None:
    """The Formula providers lines, each served as shown: the admiralty call answers as shown, and the memory
    profile under stix stamps its writes with the method and confidence the README says."""
    admiralty, stix = rb.commands(rb.sh_block(FORMULA_SERVE[0]))
    assert [admiralty, stix] == FORMULA_SERVE
    async with served(settings, admiralty) as client:
        answer = await call(client, "write_node", json_block("formula-call:admiralty"))
    rb.assert_matches(answer, json_block("formula-answer:admiralty"))
    async with served(settings, stix) as client:
        entity = {"name": "Ada", "entityType": "person", "observations": []}
        assert not (await client.call_tool("create_entities", {"entities": [entity]})).is_error
    rows = await graph.read(Statement("MATCH (n {name: 'Ada'}) RETURN n.extraction_method AS m, n.confidence AS c"))
    assert rows == [{"m": "0-10:3", "c": 0.3}]


# --- what cannot run here, checked as far as it can be -------------------------------------------------------


def test_compose_commands() -> None:
    """The compose lines name files that exist and parse, with the services the README describes, and set the
    variables the override requires."""
    for command in [c for c in EXEMPT if "docker compose" in c]:
        words = rb.argv(command)
        variables = {w.partition("=")[0] for w in words if re.fullmatch(r"[A-Z_]+=.*", w)}
        files = [words[i + 1] for i, w in enumerate(words) if w == "-f"] or ["docker-compose.yml"]
        text = "".join((ROOT / name).read_text() for name in files)
        services = {s for name in files for s in yaml.safe_load((ROOT / name).read_text())["services"]}
        assert {"memgraph", "migrate", "gate"} <= services, command
        assert set(re.findall(r"\$\{(\w+):\?", text)) == variables, f"{command}: the variables compose requires"


@pytest.mark.parametrize("engine", ["bolt"], indirect=True)
async def test_memgraph_commands(settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`migrate` against a Memgraph of your own runs as shown, on the Bolt tier standing in for bolt://db:7687;
    `serve --transport http` is given the settings its variables name (it runs until stopped)."""
    migrate_line, serve_line = rb.commands(rb.sh_block(f"{MEMGRAPH_ENV} uv run write-gate migrate"))
    here = migrate_line.replace("bolt://db:7687", settings.memgraph_url)
    code, out = await write_gate(settings, here, tmp_path)
    assert code == 0 and "0002_core_registry" in out
    words = rb.argv(serve_line)
    for word in words:
        if re.fullmatch(r"[A-Z_]+=.*", word):
            monkeypatch.setenv(*word.split("=", 1))
    configured = Settings()
    assert configured.backend.value == "memgraph" and configured.memgraph_url == "bolt://db:7687"
    assert configured.memgraph_user == "gate" and configured.agents_file == Path("agents.toml")
    args = cli.parser().parse_args(words[words.index("write-gate") + 1 :])
    assert args.func is cli.cmd_serve and args.transport == "http"


@EMBEDDED
async def test_claude_desktop_config_starts_the_server(settings: Settings) -> None:
    """The config parses, and its command line, with the reader's path filled in, serves a real client."""
    server = json.loads(rb.block('{"mcpServers": {"write-gate": {').text)["mcpServers"]["write-gate"]
    args = [ROOT.as_posix() if a == "/path/to/write-gate" else a for a in server["args"]]
    env = {**settings_env(settings), **server["env"], "UV_FROZEN": "1"}
    assert server["command"] == "uv"
    async with Client(StdioServerParameters(command=UV, args=args, env=env), read_timeout_seconds=120) as client:
        assert {tool.name for tool in (await client.list_tools()).tools} == GATE_DEFAULT_TOOLS


def test_claude_code_line_is_the_desktop_entry() -> None:
    """`claude mcp add NAME -- COMMAND ARGS...` registers a stdio server: the README's line names the server and the
    command line of the Claude Desktop (and Cursor) entry, which test_claude_desktop_config_starts_the_server runs."""
    words = rb.argv(rb.commands(rb.sh_block(CLAUDE_CODE))[0])
    entry = json.loads(rb.block('{"mcpServers": {"write-gate": {').text)["mcpServers"]
    assert words[:3] == ["claude", "mcp", "add"] and words[4] == "--"
    [name] = entry
    assert words[3] == name and words[5:] == [entry[name]["command"], *entry[name]["args"]]
    # What the entry's env sets is the default, so the Claude Code line, which sets none, serves the same gate.
    defaults = Settings()
    for variable, value in entry[name]["env"].items():
        default = getattr(defaults, variable.removeprefix("WRITE_GATE_").lower())
        assert getattr(default, "value", default) == value, variable


def test_python_snippet_runs_from_anywhere(tmp_path: Path) -> None:
    """The snippet, run as a script from a folder outside the checkout with the reader's path filled in, writes
    its node. Its server gets the SDK's default environment, so HOME points the data folder into tmp_path."""
    code = rb.block("import asyncio").text.replace("/path/to/write-gate", ROOT.as_posix())
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "PATH": f"{Path(UV).parent}:{os.environ['PATH']}"}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240
    )
    assert result.returncode == 0, result.stderr
    assert "'status': 'written'" in result.stdout and "'label': 'Person'" in result.stdout


def test_python_http_snippet_sends_its_token(tmp_path: Path) -> None:
    """The HTTP snippet, run as a script against a real `write-gate serve --transport http` with an agents file,
    with the reader's address and token filled in: the gate knows its agent by the token and writes the node."""
    settings = Settings(backend=BackendKind.EMBEDDED, data_dir=tmp_path / "data", embedded_fsync="everysec")
    agents_file = tmp_path / "agents.toml"
    token = agents_command(settings, "add", "notes-bot", "--file", str(agents_file))
    with http_gate(settings, tmp_path / "gate.log", WRITE_GATE_AGENTS_FILE=str(agents_file)) as gate:
        code = rb.block("python-http").text.replace("http://127.0.0.1:8000", gate.url)
        env = {**os.environ, "WRITE_GATE_TOKEN": token}
        result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        assert "'status': 'written'" in result.stdout and "'label': 'Person'" in result.stdout
        stranger = {**env, "WRITE_GATE_TOKEN": "wg_unknown"}
        refused = subprocess.run([sys.executable, "-c", code], env=stranger, capture_output=True, text=True, timeout=99)
        assert refused.returncode != 0 and "written" not in refused.stdout  # the token is what lets it in


def test_development_tree_names_real_files() -> None:
    """Each file the tree names is in the folder it is drawn in, and every module of the package is drawn."""
    text = rb.block("src/write_gate/").text
    package = ROOT / "src" / "write_gate"
    stack: list[tuple[int, Path]] = [(-1, package)]
    named: set[Path] = set()
    for line in text.splitlines()[1:]:
        indent = len(line) - len(line.lstrip())
        while len(stack) > 1 and stack[-1][0] >= indent:
            stack.pop()
        first = line.split()[0] if line.strip() else ""
        if re.fullmatch(r"\w+/", first):
            folder = stack[-1][1] / first.rstrip("/")
            assert folder.is_dir(), f"the Development tree draws {first}, which {stack[-1][1]} lacks"
            stack.append((indent, folder))
        for name in re.findall(r"\b\w+\.py\b", line):
            path = stack[-1][1] / name
            assert path.is_file(), f"the Development tree draws {name} in {stack[-1][1].relative_to(ROOT)}"
            named.add(path)
    undrawn = sorted(str(p.relative_to(package)) for p in package.rglob("*.py") if p.name != "__init__.py")
    undrawn = [p for p in undrawn if package / p not in named]
    assert not undrawn, f"modules the Development tree does not draw: {undrawn}"


# An npx command the README quotes without a version, and why that is right.
NPX_UNPINNED = {"@modelcontextprotocol/server-memory": "quoted as the line in the reader's own config to replace"}


def test_npx_commands_are_pinned() -> None:
    """`npx pkg` runs whatever is newest, which may not run on the reader's Node (the Inspector after 1.0.3 needs
    Node 22.7.5): every npx line the README and the pages give names a version."""
    text = "\n".join(rb.text_of(path) for path in rb.documents())
    found = re.findall(r"npx (?:-y )?(@?[\w./-]+?)(@\d[\w.]*)?[\s`]", text)
    assert found
    for package, version in found:
        assert version or package in NPX_UNPINNED, f"npx {package} is not pinned"


@EMBEDDED
async def test_spaces_example(
    settings: Settings, graph: GraphBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The spaces example as shown: the agents file the three `agents add` lines write, the registry loaded into
    the default space, and the served settings; then alice's write, bob's empty read of his own space (and his
    own Ada there), the lead's read of team_a by choice and bob's refusal, each answered as shown."""
    link_schemas(tmp_path)
    await migrate(graph)  # the default space's graph (team_a) holds the shared registry
    *adds, load, serve = rb.commands(rb.sh_block(SPACES_COMMANDS[0]))
    assert [*adds, load, serve] == SPACES_COMMANDS
    for command in adds:
        code, out = await write_gate(settings, command, tmp_path)
        assert code == 0 and re.fullmatch(r"wg_\S+\n", out)
    written = tomllib.loads((tmp_path / "agents.toml").read_text())
    shown = tomllib.loads(rb.block("spaces-agents").text)
    for agents in (written, shown):
        for agent in agents["agents"].values():
            assert re.fullmatch(r"[0-9a-f]{4}(\.\.\.|[0-9a-f]{60})", agent.pop("token_sha256"))
    assert written == shown
    assert (await write_gate(settings, load, tmp_path))[0] == 0
    assert "Npc" in {row["name"] for row in await graph.read(Statement("MATCH (s:Schema) RETURN s.name AS name"))}
    words = rb.argv(serve)
    for word in words:
        if re.fullmatch(r"[A-Z_]+=.*", word):
            monkeypatch.setenv(*word.split("=", 1))
    configured = Settings()
    assert (configured.spaces, configured.default_space) == (["team_a", "team_b"], "team_a")
    assert configured.shared_registry and configured.agents_file == Path("agents.toml")
    args = cli.parser().parse_args(words[words.index("write-gate") + 1 :])
    assert args.func is cli.cmd_serve and args.transport == "http"
    fleet = settings.model_copy(
        update={"spaces": configured.spaces, "default_space": "team_a", "agents_file": tmp_path / "agents.toml"}
    )

    def as_agent(name: str) -> Any:
        return open_client(fleet.model_copy(update={"agent": name}), "in_process")

    async with as_agent("alice") as alice, as_agent("bob") as bob, as_agent("lead") as lead:
        written_node = await call(alice, "write_node", json_block("call:write_node#spaces"))
        rb.assert_matches(written_node, json_block("answer:write_node#spaces"), "alice's write")
        rb.assert_matches(await call(bob, "read_graph", {}), json_block("answer:read_graph#spaces-bob"), "bob's read")
        bobs_ada = {**json_block("call:write_node#spaces"), "properties": {"role": "pilot"}, "source": "team-b"}
        assert (await call(bob, "write_node", bobs_ada))["status"] == "written"
        shown_read = json_block("answer:read_graph#spaces-lead")
        rb.assert_matches(await call(lead, "read_graph", json_block("call:read_graph#spaces-lead")), shown_read)
        refused = await call(bob, "read_graph", json_block("call:read_graph#spaces-refused"))
        rb.assert_matches(refused, json_block("answer:read_graph#spaces-refused"), "bob's refusal")
        [bobs] = (await call(lead, "read_graph", {"space": "team_b"}))["entities"]
        assert bobs["properties"]["role"] == "pilot"

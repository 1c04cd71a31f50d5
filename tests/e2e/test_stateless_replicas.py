"""`write-gate serve --transport http --stateless`: two replicas on one data folder (one embedded engine, shared)
behind a plain round-robin load balancer that alternates upstreams per request (bench/round_robin.py). A real
MCP client through it, speaking a handshake-era protocol (as every released client does): every call answered,
every acknowledged write in the graph, both replicas serving. Without --stateless the same balancer breaks its
session (an id only one replica knows); a 2026-07-28 client has no session, and is served either way."""

import importlib.util
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from types import ModuleType

import anyio
import pytest

from tests.conftest import run_write_gate, settings_env
from tests.e2e.http_process import Gate, agents_command, http_gate, mcp_client
from write_gate.core.cypher.statement import Statement
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import BackendKind, Settings

pytestmark = pytest.mark.anyio

BENCH = Path(__file__).resolve().parents[2] / "bench"
PERSON = {"label": "Person", "source": "replicas", "extraction_method": "manual"}
WRITERS, EACH = 4, 8


def round_robin_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_round_robin", BENCH / "round_robin.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def replicas(tmp: Path, *serve_args: str) -> Iterator[tuple[Settings, str, list[Gate]]]:
    agents_file = tmp / "agents.toml"
    settings = Settings(
        backend=BackendKind.EMBEDDED, data_dir=tmp / "data", embedded_fsync="everysec", agents_file=agents_file
    )
    token = agents_command(settings, "add", "writer", "--file", str(agents_file))
    env = {"WRITE_GATE_AGENTS_FILE": str(agents_file)}
    with ExitStack() as stack:
        gates = [stack.enter_context(http_gate(settings, tmp / f"gate{i}.log", *serve_args, **env)) for i in (0, 1)]
        yield settings, token, gates


@pytest.fixture(params=["sse", "json"])
def stateless(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Settings, str, list[Gate]]]:
    # With JSON answers a stateless tools/call runs without a server task of its own (surface/direct_calls.py).
    yield from replicas(tmp_path, "--stateless", "--http-response", request.param)


async def test_two_stateless_replicas_behind_round_robin_answer_every_call(
    stateless: tuple[Settings, str, list[Gate]],
) -> None:
    settings, token, gates = stateless
    for gate in gates:  # what is given up is said at start
        log = gate.log.read_text()
        assert "stateless" in log and "changes_since" in log and "resources/subscribe" in log
    acknowledged: list[str] = []
    rr = round_robin_module()
    async with rr.round_robin([("127.0.0.1", gate.port) for gate in gates]) as (balancer, url):
        async with mcp_client(url, token, "legacy") as client:

            async def writer(w: int) -> None:
                for i in range(EACH):
                    name = f"replica-{w}-{i}"
                    result = await client.call_tool("write_node", {**PERSON, "merge_keys": {"name": name}})
                    assert not result.is_error, result.structured_content
                    acknowledged.append(name)

            async with anyio.create_task_group() as tasks:
                for w in range(WRITERS):
                    tasks.start_soon(writer, w)
            opened = await client.call_tool("open_nodes", {"names": acknowledged})
            assert not opened.is_error, opened.structured_content
        assert sorted(e["name"] for e in opened.structured_content["entities"]) == sorted(acknowledged)
    assert len(acknowledged) == WRITERS * EACH
    # Both replicas served calls: the balancer alternates, so each got about half of them.
    assert min(balancer.served[0], balancer.served[1]) >= WRITERS * EACH // 2 - 1, balancer.served
    backend = await open_backend(settings)
    try:
        rows = await backend.read(Statement("MATCH (p:Person) WHERE p.name STARTS WITH 'replica-' RETURN p.name AS n"))
    finally:
        await backend.close()
    assert sorted(row["n"] for row in rows) == sorted(acknowledged)


async def test_without_stateless_the_balancer_breaks_a_session_but_not_a_sessionless_client(tmp_path: Path) -> None:
    """Why the mode exists: a session opened on one replica is unknown to the other (404), so a handshake-era
    client behind a plain balancer cannot finish its handshake and first call. A 2026-07-28 client sends every
    request on its own, with no session: any replica answers it, stateless or not."""
    for _, token, gates in replicas(tmp_path):
        rr = round_robin_module()
        async with rr.round_robin([("127.0.0.1", gate.port) for gate in gates]) as (balancer, url):
            with pytest.raises(Exception):  # noqa: B017,PT011 - the SDK's client fails its own way; any failure
                async with mcp_client(url, token, "legacy") as client:
                    await client.call_tool("open_nodes", {"names": ["nobody"]})
            async with mcp_client(url, token, "auto") as client:
                for i in range(4):
                    result = await client.call_tool("write_node", {**PERSON, "merge_keys": {"name": f"modern-{i}"}})
                    assert not result.is_error, result.structured_content
            assert balancer.served[0] >= 2 and balancer.served[1] >= 2, balancer.served


def test_stateless_with_dynamic_toolsets_is_refused_in_one_line(tmp_path: Path) -> None:
    env = settings_env(Settings(backend=BackendKind.EMBEDDED, data_dir=tmp_path / "data"))
    run = run_write_gate("serve", "--transport", "http", "--no-auth", "--stateless", "--dynamic-toolsets", env=env)
    assert run.returncode == 2 and "enable_toolset" in run.stderr and "Traceback" not in run.stderr

"""Limits per agent (issue 15, item 5) through a real MCP client on every engine tier: a grant's write rate
(RATE_LIMITED with retry_after_seconds beyond it; reads and replays of a key never count) and batch size."""

import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.conftest import ok, open_client, rejected, write_gate_argv
from write_gate.access.agents import AgentsFile, Grant
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.surface.write_guard import REPLAYED_META

pytestmark = pytest.mark.anyio

PER_MINUTE = 30  # a token every 2 seconds once the bucket is empty
PROV = {"source": "crm", "extraction_method": "manual", "reliability": 0.8}


def person(name: str) -> dict[str, Any]:
    return {"label": "Person", "merge_keys": {"name": name}, **PROV}


@pytest.fixture
async def limited(settings: Settings, matrix_graph: GraphBackend, tmp_path: Path) -> AsyncIterator[Client]:
    agents = AgentsFile(tmp_path / "agents.toml", {})
    agents.add("limited", Grant(max_writes_per_minute=PER_MINUTE, max_batch_items=2))
    agents.save()
    granted = settings.model_copy(update={"agents_file": agents.path, "agent": "limited"})
    async with open_client(granted, "in_process") as client:
        yield client


async def test_writes_beyond_the_rate_wait_as_told_and_reads_and_replays_never_count(limited: Client) -> None:
    early = {**person("Early"), "idempotency_key": "early"}
    await ok(limited, "write_node", early)
    refused = None
    for i in range(2 * PER_MINUTE):
        result = await limited.call_tool("write_node", person(f"P{i}"))
        if result.is_error:
            refused = result.structured_content
            break
    assert refused is not None and i >= PER_MINUTE - 1  # the bucket held PER_MINUTE (the first write took one)
    assert refused["error_code"] == "RATE_LIMITED"
    details = refused["details"]
    assert (details["limit"], details["max"]) == ("max_writes_per_minute", PER_MINUTE)
    assert 0 < details["retry_after_seconds"] <= 60 / PER_MINUTE
    assert f"retry in {details['retry_after_seconds']:g} seconds" in refused["message"]
    for _ in range(5):  # reads are never limited
        await ok(limited, "open_nodes", {"names": ["Early"]})
    replay = await limited.call_tool("write_node", early)  # a replay writes nothing: it does not count
    assert not replay.is_error and (replay.meta or {}).get(REPLAYED_META) is True
    late = {**person("Late"), "idempotency_key": "late"}
    assert (await rejected(limited, "write_node", late))["error_code"] == "RATE_LIMITED"  # the key is not kept
    await anyio.sleep(details["retry_after_seconds"])
    ran = await limited.call_tool("write_node", late)
    assert not ran.is_error and (ran.meta or {}).get(REPLAYED_META) is None, ran.structured_content


async def test_a_batch_over_the_grant_is_refused_and_reads_take_any_list(limited: Client) -> None:
    over = await rejected(limited, "write_nodes", {"items": [person(n) for n in ("A", "B", "C")]})
    assert over["error_code"] == "INVALID_INPUT"
    assert over["details"] == {"limit": "max_batch_items", "max": 2, "field": "items", "set_by": "grant"}
    await ok(limited, "write_nodes", {"items": [person(n) for n in ("A", "B")]})
    opened = await ok(limited, "open_nodes", {"names": ["A", "B", "C"]})
    assert sorted(e["name"] for e in opened["entities"]) == ["A", "B"]


def test_agents_add_sets_the_limits(tmp_path: Path) -> None:
    path = tmp_path / "agents.toml"
    argv = write_gate_argv("agents", "add", "bot", "--max-writes-per-minute", "5", "--max-batch-items", "100")
    subprocess.run([*argv, "--file", str(path)], check=True, capture_output=True)
    agent = AgentsFile.load(path).by_id("bot")
    assert agent is not None
    assert (agent.grant.max_writes_per_minute, agent.grant.max_batch_items) == (5, 100)
    subprocess.run([*write_gate_argv("agents", "add", "plain"), "--file", str(path)], check=True, capture_output=True)
    plain = AgentsFile.load(path).by_id("plain")
    assert plain is not None and plain.grant.max_writes_per_minute is None  # unlimited, as before
    assert "null" not in path.read_text()
    bad = subprocess.run([*argv[:-1], "0", "--file", str(path)], capture_output=True, text=True)
    assert bad.returncode == 2 and "positive" in bad.stderr


async def test_two_gate_processes_on_one_graph_allow_an_agent_its_rate_once(
    settings: Settings, matrix_graph: GraphBackend, tmp_path: Path
) -> None:
    """Issue 26, item 5: an agent limited to 2 writes a minute writes through two `write-gate serve` processes on
    one graph, in turn: the graph holds its bucket, so the first two writes pass and the next two are refused
    (a token comes back after 30 s). With a bucket in each process, all four passed."""
    agents = AgentsFile(tmp_path / "agents.toml", {})
    agents.add("limited", Grant(max_writes_per_minute=2))
    agents.save()
    granted = settings.model_copy(update={"agents_file": agents.path, "agent": "limited"})
    outcomes = []
    async with open_client(granted, "stdio") as first, open_client(granted, "stdio") as second:
        for n, client in enumerate((first, second, first, second)):
            result = await client.call_tool("write_node", person(f"Turn{n}"))
            outcomes.append(result.structured_content["error_code"] if result.is_error else "written")
            refusal = result.structured_content
    assert outcomes == ["written", "written", "RATE_LIMITED", "RATE_LIMITED"]
    assert "counted across every gate on this graph" in refusal["message"]
    assert refusal["details"]["shared"] == "graph"

"""A fair share per agent (issue 37, item 3; docs/fleets/limits.md): an agent at its calls in flight is refused
RATE_LIMITED with when to come back while another agent's writes pass; a read budget charged by what the engine
answered (a costly read takes more than a cheap one) that refills; who was held back, on /metrics and the console's
agents page. Agents the agents file does not list are never held back."""

import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client

from tests.bolt_double.faults import Action
from tests.conftest import bolt_faults, ok, open_client, rejected
from tests.e2e.http_process import http_gate, mcp_client
from tests.e2e.test_console import sample, scrape
from tests.e2e.test_console_routes import log_in
from write_gate.access.agents import FULL, PRESETS, AgentsFile, Grant
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.surface.admission import REFUSAL_PAUSE_SECONDS

pytestmark = pytest.mark.anyio

PROV = {"source": "crm", "extraction_method": "manual", "reliability": 0.8}


def node(label: str, name: str) -> dict[str, Any]:
    return {"label": label, "merge_keys": {"name": name}, **PROV}


async def seeded(settings: Settings, people: int) -> None:
    """`people` Person nodes, written by an agent the file does not list (never held back)."""
    async with open_client(settings.model_copy(update={"agent": "seeder"}), "in_process") as seeder:
        await ok(seeder, "write_nodes", {"items": [node("Person", f"P{i}") for i in range(people)]})


def reader_settings(settings: Settings, tmp_path: Path, budget: int, window: float) -> Settings:
    agents = AgentsFile(tmp_path / "agents.toml", {})
    agents.add("reader", Grant(tools=("read",), labels=(), relationship_types=(), read_budget=budget))
    agents.save()
    return settings.model_copy(
        update={"agents_file": agents.path, "agent": "reader", "read_budget_window_seconds": window}
    )


async def test_the_read_budget_charges_what_the_engine_answered(
    settings: Settings, matrix_graph: GraphBackend, tmp_path: Path
) -> None:
    await seeded(settings, 120)
    limited = reader_settings(settings, tmp_path, budget=100, window=3600)  # refills a unit in 36 s
    async with open_client(limited, "in_process") as reader:
        for _ in range(4):  # cheap reads: a few statements and a row or two each, well within the budget
            await ok(reader, "open_nodes", {"names": ["P1"]})
        await ok(reader, "read_graph", {"labels": ["Person"], "limit": 120})  # one costly read: 120 rows and more
        asked = time.monotonic()
        refused = await rejected(reader, "open_nodes", {"names": ["P1"]})
        paused = time.monotonic() - asked
    assert refused["error_code"] == "RATE_LIMITED", refused
    # Answered after the refusal's pause, so an agent looping on regardless goes at that pace (its retry-after is
    # far longer than the pause here).
    assert paused >= REFUSAL_PAUSE_SECONDS
    details = refused["details"]
    assert {k: details[k] for k in ("limit", "max", "window_seconds", "shared")} == {
        "limit": "read_budget",
        "max": 100,
        "window_seconds": 3600,
        "shared": "process",
    }
    # Overdrawn by more than the cheap reads took in all: over 36 s a unit, the wait is well past a few units'.
    assert details["retry_after_seconds"] > 36 * 20
    assert f"retry in {details['retry_after_seconds']:g} seconds" in refused["message"]


async def test_the_read_budget_refills_and_unlisted_agents_are_never_held_back(
    settings: Settings, matrix_graph: GraphBackend, tmp_path: Path
) -> None:
    await seeded(settings, 60)
    limited = reader_settings(settings, tmp_path, budget=20, window=1)
    async with open_client(limited, "in_process") as reader:
        await ok(reader, "read_graph", {"labels": ["Person"], "limit": 60})
        refused = await rejected(reader, "read_graph", {"labels": ["Person"], "limit": 60})
        assert refused["details"]["limit"] == "read_budget"
        await anyio.sleep(refused["details"]["retry_after_seconds"])
        await ok(reader, "read_graph", {"labels": ["Person"], "limit": 60})
    trusted = limited.model_copy(update={"agent": "stdio-operator"})  # not in the file: one caller, no share
    async with open_client(trusted, "in_process") as operator:
        for _ in range(3):
            await ok(operator, "read_graph", {"labels": ["Person"], "limit": 60})


@pytest.mark.parametrize("engine", ["bolt"], indirect=True)
async def test_an_agent_over_its_calls_in_flight_waits_as_told_while_another_writes(
    settings: Settings, matrix_graph: GraphBackend, tmp_path: Path
) -> None:
    """Over HTTP with tokens: the reader's one call in flight is held in the engine (the Bolt double); its second
    is refused with when to come back, the writer's writes pass meanwhile; /metrics and the console say who was
    held back."""
    agents = AgentsFile(tmp_path / "agents.toml", {})
    tokens = {
        "reader": agents.add("reader", Grant(tools=("read",), labels=(), relationship_types=(), max_calls_in_flight=1)),
        "writer": agents.add("writer", PRESETS["writer"]),
        "operator": agents.add("operator", FULL),
        "prometheus": agents.add("prometheus", Grant(tools=("metrics",), labels=(), relationship_types=())),
    }
    agents.save()
    env = {"WRITE_GATE_AGENTS_FILE": str(agents.path), "WRITE_GATE_CALL_QUEUE_SECONDS": "0.2"}
    faults = bolt_faults(settings)
    try:
        with http_gate(settings, tmp_path / "gate.log", **env) as gate:
            async with mcp_client(gate.url, tokens["reader"]) as reader, mcp_client(gate.url, tokens["writer"]) as w:
                await ok(w, "write_node", node("Organization", "Acme"))
                hold = faults.arm(Action.HOLD, match="Organization")
                answers: list[Any] = []

                async def held_read() -> None:
                    answers.append(await ok(reader, "read_graph", {"labels": ["Organization"]}))

                with anyio.fail_after(120):
                    async with anyio.create_task_group() as tasks:
                        tasks.start_soon(held_read)
                        while not hold.reached.is_set():  # the reader's read waits in the engine
                            await anyio.sleep(0.01)
                        refused = await rejected(reader, "search_nodes", {"query": "Acme"})
                        for i in range(3):  # the writer is not held back by the reader
                            await ok(w, "write_node", node("Person", f"W{i}"))
                        hold.release()
                assert [e["name"] for e in answers[0]["entities"]] == ["Acme"]
                await ok(reader, "search_nodes", {"query": "Acme"})  # its slot is free again
            assert refused["error_code"] == "RATE_LIMITED", refused
            assert refused["details"] == {
                "retry_after_seconds": 1.0,
                "limit": "max_calls_in_flight",
                "max": 1,
                "shared": "process",
            }
            status, text = scrape(gate.url, tokens["prometheus"])
            assert status == 200
            assert sample(text, "write_gate_held_back_calls_total", agent="reader", limit="max_calls_in_flight") == 1
            assert sample(text, "write_gate_held_back_calls_total", agent="writer", limit="max_calls_in_flight") == 0
            async with httpx2.AsyncClient(base_url=gate.url) as http:
                await log_in(http, tokens["operator"])
                page = (await http.get("/console/agents")).text
            row = page.split('data-agent="reader"', 1)[1].split("</tr>", 1)[0]
            assert '<span data-limit="max_calls_in_flight">max_calls_in_flight: 1</span>' in row
            writer_row = page.split('data-agent="writer"', 1)[1].split("</tr>", 1)[0]
            assert "data-limit" not in writer_row
    finally:
        faults.clear()


async def test_at_the_default_share_a_reader_looping_heavy_reads_is_held_back(
    settings: Settings, matrix_graph: GraphBackend, tmp_path: Path
) -> None:
    """No budget configured: a reader looping read_graph over 1,000 entities with 3,000 relations (about 4,000
    units a call, refilled at the default's 2,000 a second) is refused within a few calls, not after a hundred
    (issue 37's crowd: at 200,000 such a loop was never held back, and another agent's writes waited on it)."""
    async with open_client(settings.model_copy(update={"agent": "seeder"}), "in_process") as seeder:
        await ok(seeder, "write_nodes", {"items": [node("Person", f"P{i}") for i in range(1000)]})
        links = [
            {
                "type": "WORKS_FOR",
                "from_label": "Person",
                "from_keys": {"name": f"P{i}"},
                "to_label": "Organization",
                "to_keys": {"name": f"Org{k}"},
                "endpoint_policy": "merge_endpoints",
                **PROV,
            }  # fmt: skip
            for i in range(1000)
            for k in range(3)
        ]
        await ok(seeder, "write_relationships", {"items": links})
    agents = AgentsFile(tmp_path / "agents.toml", {})
    agents.add("reader", Grant(tools=("read",), labels=(), relationship_types=()))  # no read_budget of its own
    agents.save()
    reader_settings = settings.model_copy(update={"agents_file": agents.path, "agent": "reader"})
    answers: list[Any] = []

    async def read(reader: Client) -> None:
        answers.append(await reader.call_tool("read_graph", {"labels": ["Person"], "limit": 1000}))

    each = 0.0
    async with open_client(reader_settings, "in_process") as reader:
        # Six reads at once a round. The bucket refills at 2,000 units a second and the engine answers reads one
        # after another, so a machine that takes 2 s or more for each 4,000-unit read never lets any loop overdraw
        # it: there, no refusal is the right answer, and the test says so rather than measure the machine.
        for _ in range(5):
            started = time.perf_counter()
            async with anyio.create_task_group() as group:
                for _ in range(6):
                    group.start_soon(read, reader)
            if any(answer.is_error for answer in answers):
                break
            if (each := (time.perf_counter() - started) / 6) >= 2.0:
                break  # skipped below, once the client is closed (a skip inside it fails its teardown)
    if not any(answer.is_error for answer in answers) and each >= 2.0:
        pytest.skip(f"this machine took {each:.1f} s a read: slower than the default share refills")
    codes = {(answer.structured_content or {}).get("error_code") for answer in answers if answer.is_error}
    if codes == {"QUERY_TIMEOUT"}:  # six reads at once ran past the call limit: slower still, the same case
        pytest.skip("this machine ran six reads at once past the call limit: slower than the default share refills")
    for answer in answers:
        if not answer.is_error:
            assert len((answer.structured_content or {})["relations"]) == 3000
    result = next((answer for answer in answers if answer.is_error), answers[-1])
    refused = result.structured_content or {}
    assert refused.get("error_code") == "RATE_LIMITED", refused
    assert refused["details"]["limit"] == "read_budget" and refused["details"]["window_seconds"] == 10

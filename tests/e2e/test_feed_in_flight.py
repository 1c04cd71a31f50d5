"""A reader of the change feed never steps past a write still in flight through its gate: a batch stamped when it
starts and committed later, while other agents' small writes commit and are read, is still answered to a poller
that read past its stamp's moment, with no settle window at all (services/writes_in_flight.py). Before the
gate held its horizon below its writes in flight, a poller missed dozens of a 10,000-item batch's changes at the
default settle window of 1 s."""

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.conftest import ok, open_client, rejected
from tests.e2e.http_process import http_gate, mcp_client
from tests.e2e.test_change_feed import change_ids, drain, in_order, person
from tests.e2e.test_engine_down import PERSON as ENGINE_PERSON
from tests.e2e.test_engine_down import Remote
from tests.e2e.test_http import add_agent
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.surface.server import build_server

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

BATCH, SMALL = 3_000, 60


async def fed_while_writing(
    batcher: Client,
    writer: Client,
    poller: Client,
    cursor: str | None = None,
    items: list[dict[str, Any]] | None = None,
    settle_seconds: float = 0.0,
) -> list[dict[str, Any]]:
    """Every change the poller is answered from `cursor` while the batch (`items`, else BATCH new Persons) and the
    small writes run, and once they are over."""
    seen: list[dict[str, Any]] = []
    done = anyio.Event()

    async def batch() -> None:
        await ok(batcher, "write_nodes", {"items": items or [person(f"B{i}") for i in range(BATCH)]})

    async def small() -> None:
        for i in range(SMALL):
            await ok(writer, "write_node", person(f"S{i}"))
            await anyio.sleep(0.02)

    async def poll() -> None:
        nonlocal cursor
        while not done.is_set():
            changes, cursor = await drain(poller, cursor, limit=50)
            seen.extend(changes)
            await anyio.sleep(0.1)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(poll)
        async with anyio.create_task_group() as writing:
            writing.start_soon(batch)
            writing.start_soon(small)
        done.set()
    await anyio.sleep(settle_seconds)  # the last writes' changes are answered once the settle window is past
    rest, _ = await drain(poller, cursor, limit=500)
    return seen + rest


def assert_each_once_in_order(seen: list[dict[str, Any]], stored: set[str]) -> None:
    ids = [c["change_id"] for c in seen]
    assert len(ids) == len(set(ids)), "a change answered twice"
    assert set(ids) == stored, f"{len(stored - set(ids))} of {len(stored)} changes never answered"
    assert in_order(seen)


async def test_a_poller_in_process_is_answered_a_batch_that_commits_after_others_were_read(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    settings = settings.model_copy(update={"change_settle_seconds": 0.0})
    async with open_client(settings, "in_process") as gate, open_client(settings, "in_process") as other:
        # The batch and the poller share a gate; the small writes come through another (their commits are quick).
        seen = await fed_while_writing(gate, other, gate)
    assert_each_once_in_order(seen, await change_ids(matrix_graph))


@asynccontextmanager
async def agents(url: str, tokens: dict[str, str]) -> AsyncIterator[dict[str, Client]]:
    async with AsyncExitStack() as stack:
        yield {name: await stack.enter_async_context(mcp_client(url, token)) for name, token in tokens.items()}


@pytest.mark.one_tier
async def test_agents_of_one_http_gate_process_see_every_change_of_a_late_committing_batch(
    settings: Settings, matrix_graph: GraphBackend, tmp_path: Path
) -> None:
    """Three agents' sessions of one `write-gate serve --transport http` process, at once."""
    agents_file = tmp_path / "agents.toml"
    tokens = {name: add_agent(settings, agents_file, name) for name in ("batcher", "writer", "poller")}
    # The poller reads every change of 3,000 writes in seconds: over the default read budget (docs/fleets/limits.md).
    env = {
        "WRITE_GATE_AGENTS_FILE": str(agents_file),
        "WRITE_GATE_CHANGE_SETTLE_SECONDS": "0",
        "WRITE_GATE_READ_BUDGET": "1000000",
    }
    with http_gate(settings, tmp_path / "gate.log", **env) as gate:
        async with agents(gate.url, tokens) as clients:
            seen = await fed_while_writing(clients["batcher"], clients["writer"], clients["poller"])
    assert_each_once_in_order(seen, await change_ids(matrix_graph))
    assert {c["agent"] for c in seen} == {"batcher", "writer"}


@pytest.mark.one_tier
async def test_a_poller_through_another_gate_process_sees_the_changes_a_batch_commits_seconds_after_it_began(
    settings: Settings, matrix_graph: GraphBackend, tmp_path: Path
) -> None:
    """Three `write-gate serve --transport http` processes on one engine at the default settle window: a batch
    through one, small writes through another, a poller through the third, which only the settle window keeps
    from stepping past a change committed late. The batch's first 9,000 items rewrite nodes as they are (no
    change, no record), its last 1,000 are new: their changes commit seconds after the batch began, while the
    poller, at the head, reads the small writes. Stamped once as it began, the batch's changes all sorted before
    the small writes the poller had read, and none of the 1,000 was answered; each chunk is now stamped as it is
    sent (services/call_stamps.py)."""
    agents_file = tmp_path / "agents.toml"
    tokens = {name: add_agent(settings, agents_file, name) for name in ("batcher", "writer", "poller")}
    env = {"WRITE_GATE_AGENTS_FILE": str(agents_file), "WRITE_GATE_READ_BUDGET": "1000000"}
    same = [person(f"B{i}") for i in range(9_000)]
    with (
        http_gate(settings, tmp_path / "batcher.log", **env) as batching,
        http_gate(settings, tmp_path / "writer.log", **env) as writing,
        http_gate(settings, tmp_path / "poller.log", **env) as polling,
    ):
        async with (
            mcp_client(batching.url, tokens["batcher"]) as batcher,
            mcp_client(writing.url, tokens["writer"]) as writer,
            mcp_client(polling.url, tokens["poller"]) as poller,
        ):
            await ok(batcher, "write_nodes", {"items": same})
            before = await change_ids(matrix_graph)
            await anyio.sleep(1.1)  # past the settle window: the poller goes to the head, past these changes
            _, cursor = await drain(poller, limit=500)
            items = same + [person(f"N{i}") for i in range(1_000)]
            seen = await fed_while_writing(batcher, writer, poller, cursor, items, settle_seconds=1.1)
    late = {c["subject"]["merge_keys"]["name"] for c in seen if c["subject"]["merge_keys"]["name"][0] == "N"}
    assert len(late) == 1_000, f"{1_000 - len(late)} of the batch's 1,000 changes never answered"
    assert_each_once_in_order(seen, await change_ids(matrix_graph) - before)


async def test_a_write_the_engine_went_away_with_holds_the_horizon_for_the_wait_and_a_refused_one_does_not(
    tmp_path: Path,
) -> None:
    """A write answered BACKEND_UNAVAILABLE may still commit (the engine may finish it): its gate's feed holds its
    horizon below it for the settle window more. One refused before reaching the engine holds nothing."""
    engine = Remote("falkordb", tmp_path)
    engine.start()
    server = build_server(engine.settings(change_settle_seconds=2.0))
    try:
        async with Client(server) as client:
            gate = server.services.gate  # type: ignore[attr-defined]
            await ok(client, "write_node", ENGINE_PERSON)
            assert (await rejected(client, "write_node", {**ENGINE_PERSON, "extraction_method": "rumour"}))[
                "error_code"
            ]
            assert gate.in_flight.oldest() is None
            engine.stop()
            assert (await rejected(client, "write_node", ENGINE_PERSON))["error_code"] == "BACKEND_UNAVAILABLE"
            assert gate.in_flight.oldest() is not None
            await anyio.sleep(2.1)
            assert gate.in_flight.oldest() is None
    finally:
        engine.stop()

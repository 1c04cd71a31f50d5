"""The change feed through real MCP clients on every engine: `changes_since` answers every accepted change once,
in order, paged, resuming from its cursor across a burst of concurrent writers, deletes and merges included;
subscribers to `write-gate://changes[/{label}]` are told of writes in their area (by their own gate, by another
gate in process, by another gate process over stdio) and of none outside it; unsubscribing stops it; an agent
that may not read the feed may not subscribe."""

import base64
import itertools
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from tests.conftest import MATRIX_SCHEMAS, ok, open_client, rejected, settings_env, write_gate_argv
from tests.e2e.http_process import http_gate, mcp_client
from tests.e2e.test_engine_down import REMOTE, Remote, eventually
from tests.e2e.test_http import add_agent
from write_gate.access.agents import AgentRecord, AgentsFile, hash_token
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.services.reads import encode_cursor
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import Settings
from write_gate.store.migrations import migrate
from write_gate.store.schema_files import load_into_graph, read_sources
from write_gate.surface.server import build_server

# resources/subscribe is the handshake-era protocol's (every released client speaks it); the SDK warns it is gone from
# 2026-07-28 on, where subscriptions/listen replaces it.
pytestmark = [
    pytest.mark.anyio,
    pytest.mark.every_tier,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

WATCHER = "write_gate.serving.change_watcher"
PROV = {"source": "feed-test", "extraction_method": "manual", "reliability": 0.8}
PERSON_AREA, ORG_AREA, ALL = "write-gate://changes/Person", "write-gate://changes/Organization", "write-gate://changes"


def person(name: str, **properties: Any) -> dict[str, Any]:
    return {"label": "Person", "merge_keys": {"name": name}, "properties": properties, **PROV}


def org(name: str) -> dict[str, Any]:
    return {"label": "Organization", "merge_keys": {"name": name}, **PROV}


class Heard:
    """The `resources/updated` notifications a client session receives, in order."""

    def __init__(self) -> None:
        self.uris: list[str] = []
        self._arrived = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.uris.append(message.params.uri)
            self._arrived.set()

    async def until(self, count: int) -> list[str]:
        """Every notification so far, once there are `count` (a hang is a failure, bounded to a minute)."""
        with anyio.fail_after(60):
            while len(self.uris) < count:
                self._arrived = anyio.Event()
                await self._arrived.wait()
        return list(self.uris)


@asynccontextmanager
async def subscriber(settings: Settings, heard: Heard, transport: str = "in_process") -> AsyncIterator[Client]:
    """A handshake-era session (resources/subscribe is theirs), in process or over stdio."""
    if transport == "stdio":
        command, *args = write_gate_argv("serve", "--no-migrate")
        server: Any = StdioServerParameters(command=command, args=args, env=settings_env(settings))
    else:
        server = build_server(settings, auto_migrate=False)
    async with Client(server, mode="legacy", message_handler=heard, read_timeout_seconds=60) as client:
        yield client


async def drain(client: Client, cursor: str | None = None, limit: int = 7) -> tuple[list[dict[str, Any]], str]:
    """Every change from `cursor` on, page by page; the cursor to poll with next."""
    changes: list[dict[str, Any]] = []
    while True:
        args = {"limit": limit} | ({"cursor": cursor} if cursor else {})
        page = await ok(client, "changes_since", args)
        changes += page["changes"]
        cursor = page["next_cursor"]
        if not page["more"]:
            return changes, cursor


async def change_ids(graph: GraphBackend) -> set[str]:
    return {r["c"] for r in await graph.read(Statement("MATCH (h:WriteGateChange) RETURN h.change_id AS c"))}


def in_order(changes: list[dict[str, Any]]) -> bool:
    """Oldest first, as their stamps say (within one millisecond a batch's changes come in the order of its items,
    which the answers do not show: test_a_batchs_changes_page_in_the_order_of_its_items_from_any_cursor)."""
    stamps = [c["at"] for c in changes]
    return stamps == sorted(stamps)


# --- changes_since ----------------------------------------------------------------------------------------


async def test_changes_since_reads_every_change_once_in_order_across_concurrent_writers(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    settings = settings.model_copy(update={"change_settle_seconds": 1.0})
    writers, writes = 3, 8
    seen: list[dict[str, Any]] = []
    async with open_client(settings, "in_process") as poller:
        cursor: str | None = None
        done = anyio.Event()

        async def write(client_no: int) -> None:
            async with open_client(settings, "in_process") as client:
                for i in range(writes):
                    await ok(client, "write_node", person(f"P{client_no}-{i}", age=i))

        async def poll() -> None:
            nonlocal cursor
            while not done.is_set():  # polling while the writers write: pages end mid-burst
                changes, cursor = await drain(poller, cursor)
                seen.extend(changes)
                await anyio.sleep(0.05)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(poll)
            async with anyio.create_task_group() as writing:
                for n in range(writers):
                    writing.start_soon(write, n)
            done.set()
        await anyio.sleep(settings.change_settle_seconds)  # past the horizon: every write is answerable now
        rest, cursor = await drain(poller, cursor)
        seen += rest
        again, _ = await drain(poller, cursor)
        assert again == []  # resuming from the last cursor repeats nothing
    ids = [c["change_id"] for c in seen]
    assert len(ids) == len(set(ids)) == writers * writes  # no repeats, no gaps
    assert set(ids) == await change_ids(matrix_graph)
    assert in_order(seen)
    ada = next(c for c in seen if c["subject"] == {"label": "Person", "merge_keys": {"name": "P0-1"}})
    assert ada["op"] == "set" and ada["agent"] == "test-agent"
    assert [(p["property"], p["before"], p["after"]) for p in ada["properties"]] == [
        ("age", None, 1),
        ("name", None, "P0-1"),
    ]


async def test_changes_since_pages_filters_and_holds_back_changes_inside_the_horizon(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    # Migrated, as a served graph is: under migration 0006's index on `at`, FalkorDB's scan ignored the horizon
    # (`h.at <= $horizon`: its range index drops an upper bound on a string, FalkorDB #2239).
    await migrate(matrix_graph)
    async with open_client(settings.model_copy(update={"change_settle_seconds": 0}), "in_process") as client:
        for name in ("Ada", "Bob", "Cy"):
            await ok(client, "write_node", person(name))
        await ok(client, "write_node", org("Acme"))
        await ok(client, "write_node", person("Ada", age=37))
        first = await ok(client, "changes_since", {"limit": 2})
        assert len(first["changes"]) == 2 and first["more"]
        rest, _ = await drain(client, first["next_cursor"], limit=2)
        everything = first["changes"] + rest
        names = [c["subject"]["merge_keys"]["name"] for c in everything]
        assert names == ["Ada", "Bob", "Cy", "Acme", "Ada"]
        assert in_order(everything)
        update = everything[-1]
        assert [(p["property"], p["before"], p["after"]) for p in update["properties"]] == [("age", None, 37)]
        orgs = await ok(client, "changes_since", {"labels": ["Company"]})  # a drifted name reads as the write's
        assert [c["subject"]["label"] for c in orgs["changes"]] == ["Organization"]
        bad = await rejected(client, "changes_since", {"cursor": "not-a-cursor"})
        assert bad["error_code"] == "INVALID_INPUT"
        # The right shape at a place no record has (an audit's forged cursors): answered an empty page with itself
        # as the next cursor, so a follower that took one waited for ever. Refused.
        # A NUL in a forged cursor's text reached the engine (INTERNAL_ERROR): refused before any statement.
        forgeries = [{"s": "x", "o": 0}, {"s": "9999-99-99", "o": 0}, {"s": update["at"], "o": -5}]
        forgeries += [{"s": update["at"], "o": 0, "c": "x\x00"}, {"s": update["at"], "o": 0, "c": "\ud800"}]
        for forged in forgeries:
            cursor = encode_cursor("changes", **{"c": "", **forged})
            refused = await rejected(client, "changes_since", {"cursor": cursor})
            assert refused["error_code"] == "INVALID_INPUT", forged
        from_update = encode_cursor("changes", s=update["at"], o=0, c="")  # a real place is still a place
        resumed = (await ok(client, "changes_since", {"cursor": from_update}))["changes"]
        assert update["change_id"] in [c["change_id"] for c in resumed]
    async with open_client(settings.model_copy(update={"change_settle_seconds": 3600}), "in_process") as client:
        held = await ok(client, "changes_since", {})  # every change is newer than an hour ago: none answerable yet
        assert held["changes"] == [] and not held["more"]


async def test_a_batchs_changes_page_in_the_order_of_its_items_from_any_cursor(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    """A write_nodes batch's changes share one millisecond; small pages read it by its keys (core/feed_windows.py)
    and answer each change once, in the order of the batch's items, from the cursor each page gives and from a
    cursor written before the keys (which stands on a record of its `seq` alone: every item after it follows)."""
    items = 120
    async with open_client(settings.model_copy(update={"change_settle_seconds": 0}), "in_process") as client:
        await ok(client, "write_node", person("before"))
        await ok(client, "write_nodes", {"items": [person(f"P{i:03d}", age=i % 90) for i in range(items)]})
        await ok(client, "write_node", person("after"))
        seen, cursor = await drain(client, None, limit=7)
        names = [c["subject"]["merge_keys"]["name"] for c in seen]
        assert names == ["before", *(f"P{i:03d}" for i in range(items)), "after"]
        assert len({c["at"] for c in seen[1:-1]}) == 1  # the batch's one stamp: the check can fail
        again, _ = await drain(client, cursor)
        assert again == []
        inside = await ok(client, "changes_since", {"limit": 50})  # "before" and 49 items: the cursor inside
        rest, _ = await drain(client, inside["next_cursor"], limit=50)
        assert [c["subject"]["merge_keys"]["name"] for c in rest] == names[50:]
        # A cursor from before the keys (s, c): on "before", the first record of its millisecond.
        old = base64.urlsafe_b64encode(
            json.dumps({"k": "changes", "s": seen[0]["at"], "c": seen[0]["change_id"]}).encode()
        ).decode()
        rest, _ = await drain(client, old.rstrip("="), limit=9)
        assert [c["subject"]["merge_keys"]["name"] for c in rest] == names[1:]
        bad = base64.urlsafe_b64encode(json.dumps({"k": "changes", "s": "", "c": "", "o": "1"}).encode()).decode()
        assert (await rejected(client, "changes_since", {"cursor": bad}))["error_code"] == "INVALID_INPUT"


async def test_changes_since_shows_deletes_and_merges(settings: Settings, matrix_graph: GraphBackend) -> None:
    settings = settings.model_copy(update={"change_settle_seconds": 0})
    async with open_client(settings, "in_process") as client, open_client(settings, "in_process", "memory") as memory:
        _, cursor = await drain(client)
        await ok(memory, "create_entities", {"entities": [{"name": "Gone", "entityType": "Person"}]})
        await ok(memory, "delete_entities", {"entityNames": ["Gone"]})
        for name, extra in (("Acme", {"url": "https://acme.example"}), ("Acmee", {"founded": 1990})):
            await ok(client, "write_node", {**org(name), "properties": extra})
        merge = {
            "survivor": {"label": "Organization", "merge_keys": {"name": "Acme"}},
            "merged": [{"label": "Organization", "merge_keys": {"name": "Acmee"}}],
        }
        await ok(client, "merge_entities", merge)
        changes, _ = await drain(client, cursor)
    created, deleted, *_, merged = changes
    assert (created["op"], deleted["op"]) == ("set", "delete")
    assert deleted["subject"] == {"label": "Person", "merge_keys": {"name": "Gone"}}
    assert {p["property"]: p["before"] for p in deleted["properties"]}["name"] == "Gone"
    assert all(p["after"] is None for p in deleted["properties"])
    assert merged["subject"] == {"label": "Organization", "merge_keys": {"name": "Acme"}}
    assert [(p["property"], p["after"]) for p in merged["properties"]] == [("founded", 1990)]


# --- subscriptions ------------------------------------------------------------------------------------------


async def test_a_subscriber_hears_writes_in_its_area_by_another_gate_and_none_outside(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    heard = Heard()
    async with subscriber(settings, heard) as listener, open_client(settings, "in_process") as other_gate:
        assert (await listener.list_resources()).resources[-1].uri == ALL
        templates = (await listener.list_resource_templates()).resource_templates
        assert "write-gate://changes/{label}" in [t.uri_template for t in templates]
        await listener.subscribe_resource(PERSON_AREA)
        await ok(other_gate, "write_node", org("Acme"))  # outside the area: not heard
        await ok(other_gate, "write_node", person("Ada"))
        assert await heard.until(1) == [PERSON_AREA]
        # Reading the resource after the notification shows the write.
        read = await listener.read_resource(PERSON_AREA)
        latest = types.TextResourceContents.model_validate(read.contents[0].model_dump()).text
        assert '"Ada"' in latest and "Acme" not in latest

        await listener.subscribe_resource(ALL)  # after the area: its notification comes first when both are due
        await ok(other_gate, "write_node", org("Initech"))
        assert await heard.until(2) == [PERSON_AREA, ALL]
        await ok(other_gate, "write_node", person("Bob"))
        assert await heard.until(4) == [PERSON_AREA, ALL, PERSON_AREA, ALL]

        await listener.unsubscribe_resource(PERSON_AREA)
        await ok(other_gate, "write_node", person("Cy"))
        assert await heard.until(5) == [PERSON_AREA, ALL, PERSON_AREA, ALL, ALL]  # the area's is not sent


@pytest.mark.one_tier
async def test_a_subscriber_hears_its_own_gates_writes_and_another_process(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    heard = Heard()
    # Polling off: the own write is heard through the nudge alone.
    own = settings.model_copy(update={"change_poll_seconds": 0})
    async with subscriber(own, heard) as listener:
        await listener.subscribe_resource("write-gate://changes/person")  # a drifted name: heard as written
        await ok(listener, "write_node", person("Ada"))
        assert await heard.until(1) == ["write-gate://changes/person"]
        # A relationship's area is its type's, not its endpoints' labels'.
        await ok(listener, "write_node", person("Bob"))
        assert await heard.until(2) == ["write-gate://changes/person"] * 2
        await listener.subscribe_resource("write-gate://changes/KNOWS")
        knows = {"type": "KNOWS", "from_label": "Person", "from_keys": {"name": "Ada"}, "properties": {"since": 2020}}
        await ok(listener, "write_relationship", {**knows, "to_label": "Person", "to_keys": {"name": "Bob"}, **PROV})
        assert await heard.until(3) == ["write-gate://changes/person"] * 2 + ["write-gate://changes/KNOWS"]
    stdio_heard = Heard()
    async with subscriber(settings, stdio_heard, "stdio") as listener, open_client(settings, "in_process") as writer:
        await listener.subscribe_resource(PERSON_AREA)
        await ok(writer, "write_node", org("Acme"))
        await ok(writer, "write_node", person("Cy"))  # new: a write that changes nothing is no change
        assert await stdio_heard.until(1) == [PERSON_AREA]


async def test_only_an_agent_that_may_read_changes_subscribes(
    settings: Settings, matrix_graph: GraphBackend, tmp_path: Path
) -> None:
    scribe_record = AgentRecord(token_sha256=hash_token("t"), tools=("write",))
    agents = AgentsFile(tmp_path / "agents.toml", {"scribe": scribe_record})
    agents.save()
    scribe = settings.model_copy(update={"agents_file": agents.path, "agent": "scribe"})
    async with subscriber(scribe, Heard()) as client:
        with pytest.raises(MCPError) as refused:
            await client.subscribe_resource(ALL)
        assert refused.value.error.data["error_code"] == "PERMISSION_DENIED"
        with pytest.raises(MCPError):
            await client.read_resource(PERSON_AREA)
        assert (await rejected(client, "changes_since", {}))["error_code"] == "PERMISSION_DENIED"
    async with subscriber(settings, Heard()) as client:
        with pytest.raises(MCPError) as other:
            await client.subscribe_resource("write-gate://schema")
        assert other.value.error.code == types.INVALID_PARAMS
        with pytest.raises(MCPError) as unknown:  # no identifier: no area (an unregistered name is one: later)
            await client.subscribe_resource("write-gate://changes/no such label")
        assert unknown.value.error.code == -32002


# --- the engine away ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", REMOTE)
async def test_the_feed_says_when_the_engine_is_away_and_hears_again_when_it_is_back(
    tmp_path: Path, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=WATCHER)
    engine = Remote(kind, tmp_path)
    engine.start()
    settings = engine.settings(change_poll_seconds=0.2, change_settle_seconds=0)
    try:
        backend = await open_backend(settings)
        await load_into_graph(backend, read_sources([MATRIX_SCHEMAS]))
        await backend.close()
        heard = Heard()
        async with subscriber(settings, heard) as listener, open_client(settings, "in_process") as writer:
            await listener.subscribe_resource(PERSON_AREA)
            await ok(writer, "write_node", person("Ada"))
            assert await heard.until(1) == [PERSON_AREA]
            engine.stop()
            assert (await rejected(listener, "changes_since", {}))["error_code"] == "BACKEND_UNAVAILABLE"
            with pytest.raises(MCPError) as unreadable:
                await listener.read_resource(PERSON_AREA)
            assert unreadable.value.error.data["error_code"] == "BACKEND_UNAVAILABLE"
            await eventually(lambda: _logged(caplog, "changes not polled"))
            engine.start()
            await eventually(lambda: _logged(caplog, "changes polled again"))
            await eventually(lambda: _written(writer))
            assert await heard.until(2) == [PERSON_AREA] * 2
        # One warning for the whole outage, however many rounds it lasted: after a warning comes its recovery
        # before any other warning. (A loaded machine may see a second, short outage just after the restart.)
        said = ["away" if "not polled" in r.getMessage() else "back" for r in caplog.records if r.name == WATCHER]
        assert said[:2] == ["away", "back"], said
        assert all(earlier != later for earlier, later in itertools.pairwise(said)), said
    finally:
        engine.stop()


async def _logged(caplog: pytest.LogCaptureFixture, text: str) -> bool:
    return any(text in record.getMessage() for record in caplog.records)


async def _written(writer: Client) -> bool:
    return not (await writer.call_tool("write_node", person("Bob"))).is_error


# --- over streamable HTTP -------------------------------------------------------------------------------------


async def test_over_http_a_reader_hears_a_writers_writes_in_its_area(
    settings: Settings, matrix_graph: GraphBackend, tmp_path: Path
) -> None:
    """Two agents of one HTTP gate: a reader's session subscribes (its grant offers the reads), a writer's writes;
    the notification travels on the reader's own standalone SSE stream."""
    agents_file = tmp_path / "agents.toml"
    tokens = {name: add_agent(settings, agents_file, name, "--grant", name) for name in ("reader", "writer")}
    heard = Heard()
    env = {"WRITE_GATE_AGENTS_FILE": str(agents_file), "WRITE_GATE_CHANGE_SETTLE_SECONDS": "0"}
    with http_gate(settings, tmp_path / "gate.log", **env) as gate:
        async with (
            create_mcp_http_client(headers={"Authorization": f"Bearer {tokens['reader']}"}) as http,
            Client(
                streamable_http_client(f"{gate.url}/mcp", http_client=http), mode="legacy", message_handler=heard
            ) as reader,
            mcp_client(gate.url, tokens["writer"]) as writer,
        ):
            assert reader.server_capabilities.resources.subscribe is True
            await reader.subscribe_resource(PERSON_AREA)
            await ok(writer, "write_node", org("Acme"))
            await ok(writer, "write_node", person("Ada"))
            assert await heard.until(1) == [PERSON_AREA]
            [change] = (await ok(reader, "changes_since", {"labels": ["Person"]}))["changes"]
            assert change["agent"] == "writer"


async def test_a_long_memory_call_stamps_each_statement_as_it_is_sent_and_its_claims_say_the_same_time(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    """create_entities, add_observations and create_relations send a statement per item under one change id. At a
    settle window of 4 ms, a call's stamp is taken again once 1 ms old (services/call_stamps.py): a call's records
    carry several stamps, in the order of its items, and each record's claim, and each node's stamp and value
    claims, say the time of the statement that wrote them (stamped once, they all said the call's start)."""
    settings = settings.model_copy(update={"change_settle_seconds": 0.004})
    names = [f"M{i:02d}" for i in range(40)]
    entities = [{"name": n, "entityType": "Person", "observations": ["x"]} for n in names]
    async with open_client(settings, "in_process", profile="memory") as client:
        await ok(client, "create_entities", {"entities": entities})
        await ok(client, "add_observations", {"observations": [{"entityName": n, "contents": ["y"]} for n in names]})
        relations = [{"from": a, "to": b, "relationType": "knows"} for a, b in itertools.pairwise(names)]
        await ok(client, "create_relations", {"relations": relations})
    records = await matrix_graph.read(
        Statement(
            "MATCH (h:WriteGateChange) RETURN h.change_id AS change_id, h.at AS at, h.claim AS claim, "
            "h.key AS key, h.from_key AS from_key ORDER BY h.seq, h.seq_k"
        )
    )
    calls: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        calls.setdefault(record["change_id"], []).append(record)
        assert record["claim"][-1] == record["at"], record
    assert len(calls) == 3
    for call in calls.values():
        stamps = [r["at"] for r in call]
        assert stamps == sorted(stamps) and len(set(stamps)) > 1
    created, added, _related = calls.values()
    assert [r["key"] for r in created] == [json.dumps({"name": n}, separators=(",", ":")) for n in names]
    nodes = await matrix_graph.read(
        Statement("MATCH (n:Person) RETURN n._key AS key, n.last_updated AS at, n._p_observations AS claim")
    )
    newest = {r["key"]: r["at"] for r in added}
    assert {n["key"]: n["at"] for n in nodes} == newest
    assert all(n["claim"][-1] == newest[n["key"]] for n in nodes)

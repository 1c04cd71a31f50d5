"""Safe retries (issue 15, item 1) through real MCP client sessions on every engine tier: a write or admin call
with an `idempotency_key` lands once, however often and however concurrently it is repeated, and every repeat
answers the first outcome (marked `_meta["write-gate/replayed"]`)."""

import json
import logging
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.bolt_double import Action
from tests.conftest import TESTS, bolt_faults, is_bolt_tier, ok, open_client, rejected
from tests.e2e.test_backup import fresh_graph, write_as_several_agents
from tests.e2e.test_engine_down import PERSON, REMOTE, Remote, code, eventually, serve
from tests.integration.test_embedded import engines_on
from write_gate.core.clock import as_utc_text
from write_gate.core.cypher.idempotency import CLAIM, IDEMPOTENCY_LABEL, RELEASE
from write_gate.core.cypher.statement import Statement
from write_gate.core.feed_windows import seq_number
from write_gate.core.idempotency import arguments_digest, record_id, scope
from write_gate.engines import BackendUnavailable, GraphBackend
from write_gate.engines.falkordb import FalkorDBBackend
from write_gate.interchange.backup import dump
from write_gate.services.late_writes import LateWrites
from write_gate.serving.config import Settings
from write_gate.serving.idempotency_keeper import prune_once
from write_gate.store.bundled import bundled
from write_gate.store.migrations import migrate
from write_gate.store.schema_files import load_into_graph, read_sources
from write_gate.surface.server import build_server
from write_gate.surface.write_guard import REPLAYED_META

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

PROV = {"source": "crm", "extraction_method": "manual", "reliability": 0.8}
CLIENTS, REPEATS = 3, 4  # the storm: each key sent by 3 sessions, 4 times each, all at once


def ref(label: str, name: str) -> dict[str, Any]:
    return {"label": label, "merge_keys": {"name": name}}


def person(name: str) -> dict[str, Any]:
    return {**ref("Person", name), **PROV}


def knows(a: str, b: str, weight: float) -> dict[str, Any]:
    args = {"type": "KNOWS", "from_label": "Person", "from_keys": {"name": a}, "to_label": "Person"}
    return args | {"to_keys": {"name": b}, "weight": weight, **PROV}


@asynccontextmanager
async def clients(settings: Settings, n: int, profile: str = "gate") -> AsyncIterator[list[Client]]:
    async with open_client(settings, "in_process", profile) as first:
        if n == 1:
            yield [first]
            return
        async with clients(settings, n - 1, profile) as rest:
            yield [first, *rest]


async def storm(sessions: list[Client], tool: str, args: dict[str, Any]) -> list[Any]:
    """Every session sends the call REPEATS times, all concurrently; the answers in any order."""
    answers: list[Any] = []

    async def send(client: Client) -> None:
        result = await client.call_tool(tool, args)
        answers.append((result.is_error, result.structured_content, bool((result.meta or {}).get(REPLAYED_META))))

    async with anyio.create_task_group() as tasks:
        for client in sessions:
            for _ in range(REPEATS):
                tasks.start_soon(send, client)
    return answers


async def weight(graph: GraphBackend, a: str, b: str) -> float:
    rows = await graph.read(
        Statement("MATCH (:Person {name: $a})-[r:KNOWS]->(:Person {name: $b}) RETURN r.weight AS w", {"a": a, "b": b})
    )
    [row] = rows
    return row["w"]


async def records(graph: GraphBackend) -> list[dict[str, Any]]:
    rows = await graph.read(Statement(f"MATCH (k:{IDEMPOTENCY_LABEL}) RETURN properties(k) AS k"))
    return [row["k"] for row in rows]


def the_first_outcome_every_time(answers: list[Any]) -> Any:
    """All answers equal; exactly one ran (the others replayed it). Returns the outcome."""
    assert len(answers) == CLIENTS * REPEATS
    assert len({json.dumps(a[:2], sort_keys=True) for a in answers}) == 1, answers
    assert sum(not replayed for *_, replayed in answers) == 1
    return answers[0][1]


async def test_a_retry_storm_of_weight_averaging_and_merges_lands_each_key_once(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    graph = matrix_graph
    async with clients(settings, CLIENTS) as sessions:
        for name in ("Ada", "Bob", "Alice", "Alicia"):
            await ok(sessions[0], "write_node", person(name))
        await ok(sessions[0], "write_relationship", knows("Ada", "Bob", 1.0))
        averaged = await storm(sessions, "write_relationship", {**knows("Ada", "Bob", 0.2), "idempotency_key": "w1"})
        assert the_first_outcome_every_time(averaged)["weight"] == pytest.approx(0.6)
        assert await weight(graph, "Ada", "Bob") == pytest.approx(0.6)  # once: twice would be 0.4
        merge = {"survivor": ref("Person", "Alice"), "merged": [ref("Person", "Alicia")], "idempotency_key": "m1"}
        merged = the_first_outcome_every_time(await storm(sessions, "merge_entities", merge))
        assert merged["status"] == "merged"  # a second merge would be refused: Alicia is an alias already
        # A new key runs again: the weight moves once more.
        await ok(sessions[1], "write_relationship", {**knows("Ada", "Bob", 0.2), "idempotency_key": "w2"})
        assert await weight(graph, "Ada", "Bob") == pytest.approx(0.4)
        assert len(await records(graph)) == 3


async def test_a_retry_storm_of_appended_observations_answers_the_first_outcome(
    settings: Settings, graph: GraphBackend
) -> None:
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "memory"]))
    async with clients(settings, CLIENTS, profile="memory") as sessions:
        await ok(sessions[0], "create_entities", {"entities": [{"name": "Ada", "entityType": "person"}]})
        args = {"observations": [{"entityName": "Ada", "contents": ["likes tea"]}], "idempotency_key": "o1"}
        first = the_first_outcome_every_time(await storm(sessions, "add_observations", args))
        # Without the key a repeat would answer that nothing was added; every repeat answered the first outcome.
        assert first == {"results": [{"entityName": "Ada", "addedObservations": ["likes tea"]}]}
        opened = await ok(sessions[0], "open_nodes", {"names": ["Ada"]})
        assert opened["entities"][0]["observations"] == ["likes tea"]


@pytest.mark.one_tier
async def test_a_client_that_gave_up_gets_the_first_outcome_and_the_graph_changed_once(
    settings: Settings, graph: GraphBackend
) -> None:
    """The client stops waiting at the import's first progress report (the server is mid-write) and tells the
    server it cancelled; the import goes on, and the retry answers its outcome: created, not skipped. Over stdio,
    a server process of its own: in process the server runs the call inside the client's own task."""
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "memory"]))
    lines = [json.dumps({"type": "entity", "name": f"E{i}", "entityType": "person"}) for i in range(600)]
    call = {"format": "jsonl", "data": "\n".join(lines), "idempotency_key": "gave-up"}
    async with open_client(settings, "stdio", profile="memory") as client:
        answered: list[Any] = []
        gave_up = anyio.CancelScope()

        async def progressed(_done: float, _total: float | None, _message: str | None) -> None:
            gave_up.cancel()  # the client stops waiting (and tells the server it cancelled)

        with gave_up:
            answered.append(await client.call_tool("import_graph", call, progress_callback=progressed))
        assert answered == [] and gave_up.cancelled_caught
        again = await client.call_tool("import_graph", call)
        assert not again.is_error, again.structured_content
        assert (again.meta or {}).get(REPLAYED_META) is True  # the first call went on and stored its outcome
        assert again.structured_content["entitiesCreated"] == len(lines)  # run twice, it would say skipped
    assert len(await graph.read(Statement("MATCH (n:Person) RETURN n.name AS name"))) == len(lines)


async def test_keys_are_per_agent_and_bound_to_their_arguments(settings: Settings, matrix_graph: GraphBackend) -> None:
    graph = matrix_graph
    async with (
        open_client(settings.model_copy(update={"agent": "agent-a"}), "in_process") as a,
        open_client(settings.model_copy(update={"agent": "agent-b"}), "in_process") as b,
    ):
        for name in ("Ada", "Bob"):
            await ok(a, "write_node", person(name))
        await ok(a, "write_relationship", knows("Ada", "Bob", 1.0))
        keyed = {**knows("Ada", "Bob", 0.2), "idempotency_key": "k"}
        await ok(a, "write_relationship", keyed)
        await ok(b, "write_relationship", keyed)  # another agent's key of the same text: its own, it runs
        assert await weight(graph, "Ada", "Bob") == pytest.approx(0.4)
        reused = await rejected(a, "write_relationship", {**keyed, "weight": 0.9})
        assert reused["error_code"] == "IDEMPOTENCY_KEY_REUSED" and reused["details"] == {"field": "idempotency_key"}
        other_tool = await rejected(a, "write_node", {**person("Cy"), "idempotency_key": "k"})
        assert other_tool["error_code"] == "IDEMPOTENCY_KEY_REUSED"
        assert await weight(graph, "Ada", "Bob") == pytest.approx(0.4)
        bad = await rejected(a, "write_node", {**person("Cy"), "idempotency_key": ""})
        assert (bad["error_code"], bad["details"]["field"]) == ("INVALID_INPUT", "idempotency_key")
        for unstorable in ("k\x00one", "k\ud800"):  # as anywhere in a call: refused, nothing written
            bad = await rejected(a, "write_node", {**person("Cy"), "idempotency_key": unstorable})
            assert (bad["error_code"], bad["details"]["field"]) == ("INVALID_INPUT", "idempotency_key")
        assert not await graph.read(Statement("MATCH (n:Person {name: 'Cy'}) RETURN n"))
        read = await rejected(a, "open_nodes", {"names": ["Ada"], "idempotency_key": "r"})
        assert read["error_code"] == "INVALID_INPUT"  # reads take no key


async def test_a_rejected_write_answers_the_same_rejection_again(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    graph = matrix_graph
    async with open_client(settings, "in_process") as client:
        await ok(client, "write_node", person("Ada"))
        keyed = {**knows("Ada", "Bob", 0.5), "idempotency_key": "r1"}
        first = await client.call_tool("write_relationship", keyed)
        assert first.is_error and first.structured_content["error_code"] == "ENDPOINT_NOT_FOUND"
        await ok(client, "write_node", person("Bob"))  # the endpoint is there now; the key's outcome stays
        again = await client.call_tool("write_relationship", keyed)
        assert (again.is_error, again.structured_content) == (True, first.structured_content)
        assert again.content[0].text == first.content[0].text
        assert (again.meta or {}).get(REPLAYED_META) is True
        assert await graph.read(Statement("MATCH ()-[r:KNOWS]->() RETURN r")) == []


async def claim_left_behind(graph: GraphBackend, agent: str, key: str, tool: str, args: dict[str, Any], ago: float):
    """A pending record as a gate leaves it when it stops between claim and outcome, `ago` seconds old."""
    at = as_utc_text(datetime.now(UTC) - timedelta(seconds=ago))
    record = {"id": record_id(scope(agent), key), "args": arguments_digest(tool, args), "tool": tool, "agent": agent}
    record |= {"at": at, "seq_n": seq_number(at), "claim": "gone", "state": "pending"}  # as CLAIM writes it
    await graph.write(Statement(f"CREATE (k:{IDEMPOTENCY_LABEL}) SET k = $record", {"record": record}))


async def test_a_claim_left_by_a_stopped_gate_is_waited_for_then_refused_never_run_again(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    graph = matrix_graph
    agent = "agent-a"
    quick = settings.model_copy(update={"agent": agent, "idempotency_wait_seconds": 0.3})
    args = person("Ada")
    await claim_left_behind(graph, agent, "fresh", "write_node", args, ago=1)
    await claim_left_behind(graph, agent, "stale", "write_node", args, ago=3600)
    await claim_left_behind(graph, agent, "pruned", "write_node", args, ago=3 * 86400)
    async with open_client(quick, "in_process") as client:

        async def pruned_at_start() -> bool:  # the keeper's first prune has run
            return record_id(scope(agent), "pruned") not in {r["id"] for r in await records(graph)}

        await eventually(pruned_at_start)
        # A record past the window that no prune has reached yet: the call with its key forgets it.
        await claim_left_behind(graph, agent, "expired", "write_node", args, ago=3 * 86400)
        running = await rejected(client, "write_node", {**args, "idempotency_key": "fresh"})
        assert running["error_code"] == "IDEMPOTENCY_IN_PROGRESS"
        assert 0 < running["details"]["retry_after_seconds"] <= 5
        unknown = await rejected(client, "write_node", {**args, "idempotency_key": "stale"})
        assert unknown["error_code"] == "IDEMPOTENCY_OUTCOME_UNKNOWN"
        assert await graph.read(Statement("MATCH (n:Person) RETURN n")) == []
        # Past the retention window the record is forgotten: the key runs again.
        written = await client.call_tool("write_node", {**args, "idempotency_key": "expired"})
        assert not written.is_error and (written.meta or {}).get(REPLAYED_META) is None
        assert len(await graph.read(Statement("MATCH (n:Person) RETURN n"))) == 1


async def test_the_keeper_prunes_records_past_the_retention_window(settings: Settings, graph: GraphBackend) -> None:
    await migrate(graph)
    await claim_left_behind(graph, "a", "old", "write_node", {}, ago=25 * 3600)
    await claim_left_behind(graph, "a", "new", "write_node", {}, ago=60)
    assert await prune_once(graph, 24.0) == 1
    assert [r["id"] for r in await records(graph)] == [record_id(scope("a"), "new")]


async def test_write_and_admin_tools_advertise_the_key_and_reads_do_not(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    every = settings.model_copy(update={"toolsets": "all", "dynamic_toolsets": True})  # every tool listed
    for profile in ("gate", "memory"):
        async with open_client(every, "in_process", profile) as client:
            tools = (await client.list_tools()).tools
            for tool in tools:
                # export_graph and list_quarantine read, but are admin tools (the group decides): they take a key too.
                admin_reads = {"export_graph", "list_quarantine"}
                read_only = bool(tool.annotations and tool.annotations.read_only_hint) and tool.name not in admin_reads
                assert ("idempotency_key" in tool.input_schema.get("properties", {})) is not read_only, tool.name


@pytest.mark.parametrize("kind", REMOTE)
async def test_an_outcome_of_the_engine_away_is_not_kept_so_the_retry_runs(tmp_path: Path, kind: str) -> None:
    engine = Remote(kind, tmp_path)
    engine.start()
    try:
        async with serve(engine.settings()) as gate:

            async def loaded() -> bool:
                return await code(gate, "write_node", PERSON) is None

            await eventually(loaded)
            keyed = {**PERSON, "properties": {"born": 1815}, "idempotency_key": "down"}
            engine.stop()
            assert await code(gate, "write_node", keyed) == "BACKEND_UNAVAILABLE"
            engine.start()

            async def retried() -> bool:
                return await code(gate, "write_node", keyed) is None

            await eventually(retried)  # ran: a kept BACKEND_UNAVAILABLE would answer itself forever
            again = await gate.call_tool("write_node", keyed)
            assert not again.is_error and (again.meta or {}).get(REPLAYED_META) is True
    finally:
        engine.stop()


async def test_a_keyed_restore_counts_its_own_claim_as_nothing(settings: Settings, matrix_graph: GraphBackend) -> None:
    """import_graph's backup format restores into an empty graph only: the key it claimed first is not content."""
    graph = matrix_graph
    await migrate(graph)
    await write_as_several_agents(settings)
    data = "".join([line async for line in dump(graph)])
    target = await fresh_graph(settings)
    restore = {"format": "backup", "data": data, "idempotency_key": "restore-1"}
    async with open_client(target, "in_process") as client:
        answer = await ok(client, "import_graph", restore)
        assert answer["entitiesCreated"] > 0
        again = await client.call_tool("import_graph", restore)  # the retry: the first outcome, nothing written
        assert (again.structured_content, (again.meta or {}).get(REPLAYED_META)) == (answer, True)
        other = await rejected(client, "import_graph", {**restore, "idempotency_key": "restore-2"})
        assert other["error_code"] == "RESTORE_TARGET_NOT_EMPTY"


async def test_a_typed_tool_takes_a_key_too(settings: Settings, graph: GraphBackend) -> None:
    await load_into_graph(graph, read_sources([bundled("schemas") / "examples" / "rpg"]))
    gandalf = {"npc": {"name": "Gandalf", "role": "Wizard", "status": "Active"}, **PROV, "idempotency_key": "g"}
    async with open_client(settings, "in_process") as client:
        first = await ok(client, "add_npc", gandalf)
        again = await client.call_tool("add_npc", gandalf)
        assert (again.structured_content, (again.meta or {}).get(REPLAYED_META)) == (first, True)
        reused = await rejected(client, "add_npc", {**gandalf, "npc": {**gandalf["npc"], "status": "Gone"}})
        assert reused["error_code"] == "IDEMPOTENCY_KEY_REUSED"


@pytest.mark.parametrize("engine", ["bolt"], indirect=True)
async def test_a_claim_the_engine_failed_to_check_is_withdrawn_and_a_failed_settle_lands_later(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    """Memgraph out of memory (the Bolt double's fault) at two moments of a keyed call. At the read that checks the
    new claim is alone: the call does not run, and its claim is withdrawn, so the retry runs at once (a claim left
    behind would answer IDEMPOTENCY_IN_PROGRESS, then OUTCOME_UNKNOWN, for a call that never ran). At the write
    that stores the outcome: the call's own answer still goes out, the claim stays pending (repeats wait), and the
    outcome is stored once the engine takes it (services/late_writes.py): then repeats answer it."""
    graph = matrix_graph
    faults = bolt_faults(settings)
    quick = settings.model_copy(update={"idempotency_wait_seconds": 0.3})
    async with open_client(quick, "in_process") as client:
        checked = {**person("Ada"), "idempotency_key": "checked"}
        faults.arm(Action.OUT_OF_MEMORY, match="RETURN properties(k) AS record")
        try:
            failed = await rejected(client, "write_node", checked)
        finally:
            faults.clear()
        assert (failed["error_code"], failed["details"]["reason"]) == ("BACKEND_UNAVAILABLE", "storage")
        assert await records(graph) == []
        retried = await client.call_tool("write_node", checked)
        assert not retried.is_error and (retried.meta or {}).get(REPLAYED_META) is None, retried.structured_content

        settled = {**person("Bob"), "idempotency_key": "settled"}
        faults.arm(Action.OUT_OF_MEMORY, match="SET k.state = 'done'")
        try:
            await ok(client, "write_node", settled)
        finally:
            faults.clear()
        repeat = await rejected(client, "write_node", settled)
        assert repeat["error_code"] == "IDEMPOTENCY_IN_PROGRESS"

        async def replayed() -> bool:
            again = await client.call_tool("write_node", settled)
            return not again.is_error and (again.meta or {}).get(REPLAYED_META) is True

        await eventually(replayed)
    assert len(await graph.read(Statement("MATCH (n:Person) RETURN n"))) == 2


class TwinClaim:
    """A gate's engine where its first claim of a key meets a twin: the record another gate's concurrent MERGE created
    beside it (FalkorDB does not serialise a MERGE's match with its create), which that gate withdraws once it too
    finds two. Both records are real, written by the statements the other gate would have sent."""

    def __init__(self, inner: GraphBackend, graph: GraphBackend) -> None:
        self.inner, self.graph, self.dialect = inner, graph, inner.dialect
        self.twin: dict[str, Any] | None = None
        self.withdrawn = False

    async def write(self, statement: Statement) -> list[dict[str, Any]]:
        rows = await self.inner.write(statement)
        if statement.text == CLAIM.text and self.twin is None:
            self.twin = {**rows[0]["record"], "claim": "the-other-gate"}
            await self.graph.write(Statement(f"CREATE (k:{IDEMPOTENCY_LABEL}) SET k = $twin", {"twin": self.twin}))
        elif statement.text == RELEASE.text and self.twin is not None and not self.withdrawn:
            self.withdrawn = True  # this gate withdrew on seeing two; so does the other
            await self.graph.write(Statement(RELEASE.text, {"id": self.twin["id"], "claim": self.twin["claim"]}))
        return rows

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@pytest.mark.one_tier
async def test_a_claim_that_meets_a_twin_withdraws_and_claims_again_and_the_key_runs_once(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    graph = matrix_graph
    server = build_server(settings, auto_migrate=False)
    async with Client(server) as client:
        gate = server.services.gate
        gate.backend = twin = TwinClaim(gate.backend, graph)
        keyed = {**person("Ada"), "properties": {"born": 1815}, "idempotency_key": "twin"}
        first = await client.call_tool("write_node", keyed)
        assert not first.is_error and twin.withdrawn, first.structured_content
        again = await client.call_tool("write_node", keyed)
        assert (again.structured_content, (again.meta or {}).get(REPLAYED_META)) == (first.structured_content, True)
    [record] = await records(graph)
    assert record["state"] == "done" and record["claim"] != "the-other-gate"
    assert len(await graph.read(Statement("MATCH (n:Person) RETURN n"))) == 1


@asynccontextmanager
async def applied_after_the_gate_gave_up(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, match: str
) -> AsyncIterator[None]:
    """The first write statement containing `match` reaches the engine, which applies it only after the gate has
    stopped waiting. On the Bolt tier, the double's LOST_COMMIT: the statement runs, the COMMIT is never answered
    (a Memgraph that died while committing). On FalkorDB, the engine is stopped (SIGSTOP) as the statement goes
    out and goes on (SIGCONT) once the gate's query timeout has passed: it then runs what waited in its socket."""
    if is_bolt_tier(settings):
        bolt_faults(settings).arm(Action.LOST_COMMIT, match=match)
        try:
            yield
        finally:
            bolt_faults(settings).clear()
        return
    [engine] = engines_on(settings.data_dir)
    original = FalkorDBBackend._run  # noqa: SLF001
    stopped = False

    async def stopping(backend: FalkorDBBackend, statement: Statement, read_only: bool) -> Any:
        nonlocal stopped
        if read_only or stopped or match not in statement.text:
            return await original(backend, statement, read_only)
        stopped = True
        os.kill(engine.pid, signal.SIGSTOP)
        try:
            return await original(backend, statement, read_only)
        finally:
            os.kill(engine.pid, signal.SIGCONT)

    monkeypatch.setattr(FalkorDBBackend, "_run", stopping)
    yield
    monkeypatch.undo()


@pytest.mark.parametrize("engine", ["embedded", "bolt"], indirect=True)
async def test_a_write_the_engine_may_have_applied_is_never_run_again_by_its_key(
    settings: Settings, matrix_graph: GraphBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine applies a keyed write after the gate gave up on it. The call answers BACKEND_UNAVAILABLE saying
    it may have been applied; its key is never run again (IDEMPOTENCY_OUTCOME_UNKNOWN), so the subject holds one
    change, at revision 1 (a key freed as for an outcome that wrote nothing let the retry write it again)."""
    graph = matrix_graph
    quick = settings.model_copy(update={"query_timeout_seconds": 1.0, "idempotency_wait_seconds": 0.3})
    keyed = {**person("Ada"), "properties": {"born": 1815}, "idempotency_key": "late"}
    async with open_client(quick, "in_process") as client:
        async with applied_after_the_gate_gave_up(settings, monkeypatch, "MERGE (n:`Person` {_key"):
            failed = await rejected(client, "write_node", keyed)
        assert (failed["error_code"], failed["details"]["applied"]) == ("BACKEND_UNAVAILABLE", "unknown")

        async def applied() -> bool:
            return bool(await graph.read(Statement("MATCH (n:Person {name: 'Ada'}) RETURN n")))

        await eventually(applied)
        for _ in range(2):
            again = await rejected(client, "write_node", keyed)
            assert again["error_code"] == "IDEMPOTENCY_OUTCOME_UNKNOWN", again
        history = await ok(client, "get_history", {**ref("Person", "Ada"), "property": "born"})
    assert [(c["after"], c["revision"]) for c in history["changes"]] == [(1815, 1)]
    [node] = await graph.read(Statement("MATCH (n:Person {name: 'Ada'}) RETURN n._rev AS rev, n.born AS born"))
    assert node == {"rev": 1, "born": 1815}
    [record] = await records(graph)
    assert record["state"] == "unknown"


class AwayFor:
    """The gate's engine, away for the first statement whose text contains `match`: it fails as an unreachable
    engine's does, before it is sent; every other statement (and that one's later sends) reaches the engine."""

    def __init__(self, inner: GraphBackend, match: str) -> None:
        self.inner, self.match, self.dialect = inner, match, inner.dialect
        self.failed = False

    async def write(self, statement: Statement) -> list[dict[str, Any]]:
        if not self.failed and self.match in statement.text:
            self.failed = True
            raise BackendUnavailable("FalkorDB unreachable: ConnectionError")
        return await self.inner.write(statement)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def test_an_outcome_the_engine_was_away_for_is_stored_once_it_is_back(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    """The write lands, then the engine is away as the outcome is stored: the call's answer goes out, and the
    outcome is stored in the background once the engine takes it (services/late_writes.py), so a repeat answers it
    rather than waiting for the claim to go stale."""
    quick = settings.model_copy(update={"idempotency_wait_seconds": 5.0})
    server = build_server(quick, auto_migrate=False)
    async with Client(server) as client:
        gate = server.services.gate
        gate.backend = away = AwayFor(gate.backend, "SET k.state = 'done'")
        keyed = {**person("Ada"), "properties": {"born": 1815}, "idempotency_key": "away"}
        first = await client.call_tool("write_node", keyed)
        assert not first.is_error and away.failed, first.structured_content
        again = await client.call_tool("write_node", keyed)  # waits for the late outcome, then answers it
        assert (again.structured_content, (again.meta or {}).get(REPLAYED_META)) == (first.structured_content, True)
    [record] = await records(matrix_graph)
    assert record["state"] == "done"


class Gone:
    """An engine that never comes back: every write fails before it is sent."""

    async def write(self, statement: Statement) -> list[dict[str, Any]]:
        raise BackendUnavailable("FalkorDB unreachable: ConnectionError")


async def test_a_late_write_the_engine_never_takes_is_given_up_with_a_word(caplog: pytest.LogCaptureFixture) -> None:
    """The engine stays away for longer than the claim's stale window: the late write stops trying, says so, and
    the claim goes stale as it would have."""
    late = LateWrites(retry_seconds=0.01)
    with caplog.at_level(logging.WARNING, logger="write_gate.services.late_writes"):
        late.keep_trying(Gone(), Statement("RETURN 1"), "settled", for_seconds=0.05)  # type: ignore[arg-type]
        with anyio.fail_after(5):
            while late.pending:
                await anyio.sleep(0.01)
    assert "an idempotency record was never settled: the engine stayed away" in caplog.text

"""Quarantine and replay (issue 15, item 2), through MCP clients on every engine tier: rejected writes are kept
outside the working graph, listed by code, label and agent, and replayed after the registry changes as the
agents that sent them; what still fails stays."""

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.bolt_double import Action
from tests.conftest import TESTS, bolt_faults, ok, open_client, rejected
from tests.e2e.http_process import free_port
from write_gate.access.agents import READER, AgentsFile, Grant
from write_gate.core.clock import as_utc_text
from write_gate.core.cypher.statement import Statement
from write_gate.core.decisions import UnknownLabelPolicy
from write_gate.core.quarantine import QUARANTINE_LABEL, RejectedCall, rejected_calls
from write_gate.engines import GraphBackend
from write_gate.services.quarantine import CLAIM_STALE, Quarantine, ReplayQuarantineRequest
from write_gate.serving.assembly import open_gate
from write_gate.serving.config import BackendKind, Settings
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]
PEOPLE = TESTS / "schemas" / "quarantine"
VEHICLE = TESTS / "schemas" / "quarantine_vehicle"
# Text an agent might send that looks like Cypher, with both kinds of quote: stored and replayed as a value.
HOSTILE = 'x\'}) MATCH (n) DETACH DELETE n // "quoted" `tick`'


def vehicle(plate: str, **properties: Any) -> dict[str, Any]:
    return {
        "label": "Vehicle",
        "merge_keys": {"plate": plate},
        "properties": properties,
        "source": "dashcam",
        "extraction_method": "api",
    }


def strict(settings: Settings, **changes: Any) -> Settings:
    """Unknown labels rejected (not remapped to a fallback), so a Vehicle before its entry is refused."""
    return settings.model_copy(update={"unknown_label_policy": UnknownLabelPolicy.REJECT, **changes})


@pytest.fixture
async def people(graph: GraphBackend) -> GraphBackend:
    await load_into_graph(graph, read_sources([PEOPLE]))
    return graph


async def entries(client: Client, **filters: Any) -> list[dict[str, Any]]:
    return (await ok(client, "list_quarantine", filters))["entries"]


async def vehicles(graph: GraphBackend) -> dict[str, dict[str, Any]]:
    rows = await graph.read(Statement("MATCH (v:Vehicle) RETURN properties(v) AS v"))
    return {row["v"]["plate"]: row["v"] for row in rows}


@pytest.mark.every_transport
async def test_a_replay_after_a_schema_load_writes_exactly_the_matching_rejections(
    settings: Settings, people: GraphBackend, transport: str
) -> None:
    settings = strict(settings)
    async with open_client(settings.model_copy(update={"agent": "fleet-a"}), transport) as a:
        assert (await rejected(a, "write_node", vehicle("AB-1")))["error_code"] == "SCHEMA_UNKNOWN_LABEL"
        await rejected(a, "write_node", vehicle("AB-2", note=HOSTILE))
    async with open_client(settings.model_copy(update={"agent": "fleet-b"}), transport) as b:
        await rejected(b, "write_node", vehicle("CD-3", wheels=4))
        ada = {"label": "Person", "merge_keys": {"name": "Ada"}, "properties": {"age": "old"}, "source": "s"}
        ada["extraction_method"] = "api"
        assert (await rejected(b, "write_node", ada))["error_code"] == "SCHEMA_TYPE_MISMATCH"
        # A read's rejection is not a lost write: not kept.
        await rejected(b, "read_graph", {"cursor": "not-a-cursor"})
    async with open_client(settings.model_copy(update={"agent": "operator"}), transport) as admin:
        every = await entries(admin)
        assert len(every) == 4
        assert [e["agent"] for e in every] == ["fleet-b", "fleet-b", "fleet-a", "fleet-a"]  # newest first
        assert {e["id"] for e in await entries(admin, error_code="SCHEMA_UNKNOWN_LABEL")} == {
            e["id"] for e in every if e["labels"] == ["Vehicle"]
        }
        assert len(await entries(admin, label="Vehicle")) == 3
        assert [e["error_code"] for e in await entries(admin, agent="fleet-b")] == [
            "SCHEMA_TYPE_MISMATCH",
            "SCHEMA_UNKNOWN_LABEL",
        ]
        assert await entries(admin, tool="write_relationship") == []
        kept = next(e for e in every if e["arguments"]["merge_keys"] == {"plate": "AB-2"})
        assert kept["arguments"] == vehicle("AB-2", note=HOSTILE) and kept["tool"] == "write_node"
        # Outside the working graph: no read, schema or export meets an entry; the lossless backup carries them.
        assert (await ok(admin, "read_graph", {}))["entities"] == []
        assert QUARANTINE_LABEL not in str(await ok(admin, "get_schema", {}))
        assert QUARANTINE_LABEL not in (await ok(admin, "export_graph", {"format": "json"}))["content"]
        assert QUARANTINE_LABEL in (await ok(admin, "export_graph", {"format": "backup"}))["content"]

        await load_into_graph(people, read_sources([VEHICLE]))
        await ok(admin, "refresh_schema_cache", {})
        replayed = await ok(admin, "replay_quarantine", {"label": "Vehicle"})
        assert (replayed["replayed"], replayed["written"], replayed["rejected"]) == (3, 3, 0)
        assert [o["agent"] for o in replayed["outcomes"]] == ["fleet-a", "fleet-a", "fleet-b"]  # oldest first
        assert all(o["result"]["status"] == "written" for o in replayed["outcomes"])

        written = await vehicles(people)
        assert set(written) == {"AB-1", "AB-2", "CD-3"}
        assert {plate: v["written_by"] for plate, v in written.items()} == {
            "AB-1": "fleet-a",
            "AB-2": "fleet-a",
            "CD-3": "fleet-b",
        }
        assert written["AB-2"]["note"] == HOSTILE and written["CD-3"]["wheels"] == 4
        assert written["AB-1"]["source"] == "dashcam"

        [left] = await entries(admin)
        assert left["error_code"] == "SCHEMA_TYPE_MISMATCH" and left["agent"] == "fleet-b"
        again = await ok(admin, "replay_quarantine", {"agent": "fleet-b"})
        assert (again["written"], again["rejected"]) == (0, 1)
        assert again["outcomes"][0]["error_code"] == "SCHEMA_TYPE_MISMATCH"
        [still] = await entries(admin)
        assert still["id"] == left["id"] and still["replays"] == 1
        assert (await ok(admin, "replay_quarantine", {"label": "Vehicle"}))["replayed"] == 0  # nothing twice
        assert len(await vehicles(people)) == 3

        assert (await ok(admin, "discard_quarantine", {"ids": [still["id"], "gone"]}))["discarded"] == [still["id"]]
        assert await entries(admin) == []


async def test_the_oldest_entries_are_dropped_beyond_the_bound(settings: Settings, people: GraphBackend) -> None:
    async with open_client(strict(settings, quarantine_max_entries=3), "in_process") as client:
        for n in range(5):
            await rejected(client, "write_node", vehicle(f"P-{n}"))
        kept = await entries(client)
        assert [e["arguments"]["merge_keys"]["plate"] for e in kept] == ["P-4", "P-3", "P-2"]
        first = await ok(client, "list_quarantine", {"limit": 2})
        second = await ok(client, "list_quarantine", {"limit": 2, "cursor": first["next_cursor"]})
        assert [e["id"] for e in first["entries"] + second["entries"]] == [e["id"] for e in kept]
        assert second["next_cursor"] is None


async def test_zero_keeps_nothing(settings: Settings, people: GraphBackend) -> None:
    async with open_client(strict(settings, quarantine_max_entries=0), "in_process") as client:
        await rejected(client, "write_node", vehicle("Z-1"))
        assert await entries(client) == []
    assert await people.read(Statement(f"MATCH (q:{QUARANTINE_LABEL}) RETURN q")) == []


async def test_a_batch_keeps_its_rejected_items_as_the_single_calls_they_stand_for(
    settings: Settings, people: GraphBackend
) -> None:
    ada = {"label": "Person", "merge_keys": {"name": "Ada"}, "source": "s", "extraction_method": "api"}
    items = [ada, vehicle("V-1"), vehicle("V-2", wheels=2)]
    async with open_client(strict(settings, agent="loader", max_batch_items=3), "in_process") as client:
        answer = await ok(client, "write_nodes", {"items": items})
        assert (answer["written"], answer["rejected"]) == (1, 2)
        kept = await entries(client)
        assert [(e["tool"], e["arguments"]) for e in kept] == [("write_node", items[2]), ("write_node", items[1])]
        # A batch refused as a whole (over the batch limit) is kept whole; the lifted limit lets it pass, and its
        # items rejected then are kept alone.
        aged = {**ada, "properties": {"age": "old"}}
        batch = {"items": [vehicle("W-1"), aged, vehicle("W-2"), vehicle("W-3")]}
        assert (await rejected(client, "write_nodes", batch))["error_code"] == "INVALID_INPUT"
    async with open_client(strict(settings, agent="operator", max_batch_items=4), "in_process") as client:
        await load_into_graph(people, read_sources([VEHICLE]))
        await ok(client, "refresh_schema_cache", {})
        assert (await ok(client, "replay_quarantine", {"tool": "write_node"}))["written"] == 2
        replayed = await ok(client, "replay_quarantine", {"tool": "write_nodes"})
        assert replayed["written"] == 1 and replayed["outcomes"][0]["result"]["written"] == 3
        [left] = await entries(client)
        assert (left["tool"], left["arguments"], left["agent"]) == ("write_node", aged, "loader")
    assert set(await vehicles(people)) == {"V-1", "V-2", "W-1", "W-2", "W-3"}


async def test_a_typed_tool_rejection_is_kept_under_its_label(settings: Settings, people: GraphBackend) -> None:
    typed = {"person": {"name": "Ada", "age": "thirty-six"}, "source": "s", "extraction_method": "api"}
    async with open_client(strict(settings, agent="typist"), "in_process") as client:
        code = (await rejected(client, "add_person", typed))["error_code"]
        [entry] = await entries(client, label="Person")
        assert (entry["tool"], entry["error_code"], entry["arguments"]) == ("add_person", code, typed)
        fixed = {**typed, "person": {"name": "Ada", "age": 36}}
        await ok(client, "add_person", fixed)  # a fresh call, not the replay: the entry still fails as sent
        outcome = (await ok(client, "replay_quarantine", {"ids": [entry["id"]]}))["outcomes"]
        assert [(o["status"], o["error_code"]) for o in outcome] == [("rejected", code)]


async def test_the_memory_profile_keeps_and_replays_its_rejections(settings: Settings, people: GraphBackend) -> None:
    """add_observations to an entity that is not there yet: kept, and written once the entity is."""
    observe = {"observations": [{"entityName": "Ada", "contents": ["wrote the first program"]}]}
    async with open_client(settings.model_copy(update={"agent": "scribe"}), "in_process", "memory") as memory:
        assert (await rejected(memory, "add_observations", observe))["error_code"] == "ENTITY_NOT_FOUND"
        [entry] = await entries(memory, agent="scribe")
        assert (entry["tool"], entry["arguments"]) == ("add_observations", observe)
        await ok(memory, "create_entities", {"entities": [{"name": "Ada", "entityType": "Person", "observations": []}]})
        replayed = await ok(memory, "replay_quarantine", {"tool": "add_observations"})
        assert replayed["written"] == 1 and await entries(memory) == []
        [ada] = (await ok(memory, "open_nodes", {"names": ["Ada"]}))["entities"]
        assert ada["observations"] == ["wrote the first program"]


async def test_transient_rejections_are_not_kept(settings: Settings, people: GraphBackend) -> None:
    """The engine away, the registry not loaded, a defect, a rate limit: a retry's business, not a replay's."""
    async with open_client(strict(settings), "in_process") as client:
        await rejected(client, "write_node", vehicle("T-1"))  # one lasting rejection, for contrast
        async with open_gate(settings, auto_migrate=False) as gate:
            quarantine = Quarantine(gate, 10, 1 << 20)
            for code in ("BACKEND_UNAVAILABLE", "INTERNAL_ERROR", "SCHEMA_SOURCE_UNAVAILABLE", "RATE_LIMITED"):
                answer = {"error_code": code, "message": "m", "details": {}}
                assert rejected_calls("write_node", vehicle("T-2"), answer, True, None) == []
                assert await quarantine.keep([RejectedCall("write_node", vehicle("T-2"), answer)], "x", None) == []
            assert len(await entries(client)) == 1


def _agents(path: Path, **grants: Grant) -> Path:
    agents = AgentsFile(path, {})
    for agent_id, grant in grants.items():
        agents.add(agent_id, grant)
    agents.save()
    return path


async def test_grants_decide_who_lists_and_as_whom_a_replay_runs(
    settings: Settings, people: GraphBackend, tmp_path: Path
) -> None:
    writer = Grant(tools=("read", "write"), labels=("Person", "Vehicle"), relationship_types=())
    path = _agents(tmp_path / "agents.toml", reader=READER, cars=writer, bikes=writer, operator=Grant())
    settings = strict(settings, agents_file=path)
    async with open_client(settings.model_copy(update={"agent": "reader"}), "in_process") as reader:
        assert (await rejected(reader, "list_quarantine", {}))["error_code"] == "PERMISSION_DENIED"
        # A write the grant does not allow is kept (PERMISSION_DENIED lasts until the grant changes).
        assert (await rejected(reader, "write_node", vehicle("R-1")))["error_code"] == "PERMISSION_DENIED"
    for agent_id, plate in (("cars", "C-1"), ("bikes", "B-1")):
        async with open_client(settings.model_copy(update={"agent": agent_id}), "in_process") as client:
            await rejected(client, "write_node", vehicle(plate))
    _agents(path, reader=READER, cars=writer, operator=Grant())  # bikes is no longer granted
    await load_into_graph(people, read_sources([VEHICLE]))
    async with open_client(settings.model_copy(update={"agent": "operator"}), "in_process") as admin:
        assert [e["error_code"] for e in await entries(admin, agent="reader")] == ["PERMISSION_DENIED"]
        await ok(admin, "refresh_schema_cache", {})
        replayed = await ok(admin, "replay_quarantine", {"label": "Vehicle"})
        outcome = {o["agent"]: (o["status"], o["error_code"]) for o in replayed["outcomes"]}
        assert outcome == {
            "reader": ("rejected", "PERMISSION_DENIED"),  # its grant of now still does not write
            "cars": ("written", None),
            "bikes": ("rejected", "PERMISSION_DENIED"),  # gone from the agents file: no grant
        }
        assert set(await vehicles(people)) == {"C-1"}
        assert {e["agent"] for e in await entries(admin)} == {"reader", "bikes"}


async def test_an_entry_the_engine_does_not_take_leaves_the_answer_as_it_was(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """No engine at all: a reader's write is refused PERMISSION_DENIED (before any engine is asked); keeping it
    fails, which is logged, and the agent's answer is that refusal, not the engine's absence."""
    path = _agents(tmp_path / "agents.toml", reader=READER)
    away = Settings(
        backend=BackendKind.FALKORDB,
        falkordb_url=f"redis://127.0.0.1:{free_port()}",
        query_timeout_seconds=1,
        agents_file=path,
        agent="reader",
        graph_name="g",
    )
    async with open_client(away, "in_process") as client:
        refusal = await rejected(client, "write_node", vehicle("N-1"))
    assert refusal["error_code"] == "PERMISSION_DENIED"
    assert "not quarantined" in caplog.text


async def test_a_keyed_rejection_is_kept_once_without_its_key_and_replays_as_a_new_attempt(
    settings: Settings, people: GraphBackend
) -> None:
    """Safe retries and the quarantine together: the retry storm of one rejected write keeps one entry (a repeat
    answered from the key's record is not a new rejection), stored without the key, so the replay after the
    schema load runs as a fresh call rather than answering the key's first outcome again."""
    settings = strict(settings, agent="fleet-a")
    async with open_client(settings, "in_process") as client:
        keyed = {**vehicle("KEY-1"), "idempotency_key": "dashcam-0001"}
        for _ in range(3):
            assert (await rejected(client, "write_node", keyed))["error_code"] == "SCHEMA_UNKNOWN_LABEL"
        (entry,) = await entries(client)
        assert "idempotency_key" not in entry["arguments"] and entry["arguments"] == vehicle("KEY-1")
        await load_into_graph(people, read_sources([VEHICLE]))
        await ok(client, "refresh_schema_cache", {})
        replay = await ok(client, "replay_quarantine", {"label": "Vehicle"})
        assert (replay["written"], replay["rejected"]) == (1, 0)
        assert set(await vehicles(people)) == {"KEY-1"}
        # The key still answers its first outcome: the rejection, kept for its retention window.
        assert (await rejected(client, "write_node", keyed))["error_code"] == "SCHEMA_UNKNOWN_LABEL"
        assert await entries(client) == []


async def test_a_rejection_holding_text_no_engine_stores_is_kept_and_read_back_as_sent(
    settings: Settings, people: GraphBackend
) -> None:
    """A NUL (FalkorDB cuts a query at one) and a lone surrogate, in a value and in a label: the write is refused,
    its entry is kept (arguments escaped as ASCII JSON, names made storable) and lists the arguments as sent; a
    replay answers per entry, never INTERNAL_ERROR. Found by the all-tools fuzzer."""
    settings = strict(settings, agent="fleet-a")
    odd = {**vehicle("NUL-1", note="a\x00b \ud800"), "label": "Vehicle\x00"}
    async with open_client(settings, "in_process") as client:
        assert (await rejected(client, "write_node", odd))["error_code"] == "INVALID_INPUT"
        (entry,) = await entries(client)
        assert entry["arguments"] == odd and entry["error_code"] == "INVALID_INPUT"
        replay = await ok(client, "replay_quarantine", {})
        assert (replay["replayed"], replay["rejected"]) == (1, 1)
        assert replay["outcomes"][0]["error_code"] == "INVALID_INPUT"


# --- replays at the same time ---------------------------------------------------------------------------------


async def test_two_replays_at_once_run_each_entry_once(settings: Settings, people: GraphBackend) -> None:
    """Two operators replay the same entries at once (two gates): each entry runs in one replay only, and the
    two reports together name every entry once. Without the claim both selected every entry and ran it twice
    (a relationship's averaged weight would move twice)."""
    settings = strict(settings, agent="fleet-a")
    async with open_client(settings, "in_process") as writer:
        for number in range(24):
            await rejected(writer, "write_node", vehicle(f"P-{number}"))
    await load_into_graph(people, read_sources([VEHICLE]))
    reports: list[dict[str, Any]] = []

    async def replay(operator: str) -> None:
        async with open_client(settings.model_copy(update={"agent": operator}), "in_process") as admin:
            reports.append(await ok(admin, "replay_quarantine", {"label": "Vehicle"}))

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(replay, "operator-1")
        tasks.start_soon(replay, "operator-2")
    ran = [outcome["id"] for report in reports for outcome in report["outcomes"]]
    assert len(ran) == len(set(ran)) == 24
    assert all(outcome["status"] == "written" for report in reports for outcome in report["outcomes"])
    assert len(await vehicles(people)) == 24
    assert await people.read(Statement(f"MATCH (q:{QUARANTINE_LABEL}) RETURN q.id AS id")) == []


async def test_a_claimed_entry_waits_for_its_replay_and_a_stale_claim_is_taken_over(
    settings: Settings, people: GraphBackend
) -> None:
    """An entry another replay holds is passed over; one whose claim is older than the claim's hold (its gate
    stopped part way) is replayed; a transient failure lets the claim go and leaves the entry as it was."""
    settings = strict(settings, agent="fleet-a")
    async with open_client(settings, "in_process") as client:
        for plate in ("HELD", "STALE"):
            await rejected(client, "write_node", vehicle(plate))
        held, stale = sorted(await entries(client), key=lambda e: e["arguments"]["merge_keys"]["plate"])
        now = datetime.now(UTC)
        for entry, claimed in ((held, now), (stale, now - CLAIM_STALE - timedelta(seconds=1))):
            params = {"id": entry["id"], "at": as_utc_text(claimed)}
            await people.write(
                Statement(f"MATCH (q:{QUARANTINE_LABEL}) WHERE q.id = $id SET q.replaying = $at", params)
            )
        await load_into_graph(people, read_sources([VEHICLE]))
        await ok(client, "refresh_schema_cache", {})
        replay = await ok(client, "replay_quarantine", {"label": "Vehicle"})
        assert [outcome["id"] for outcome in replay["outcomes"]] == [stale["id"]]
        assert set(await vehicles(people)) == {"STALE"} and [e["id"] for e in await entries(client)] == [held["id"]]

    async with open_gate(settings) as gate:  # the call path a replay is handed, answering a transient failure
        quarantine = Quarantine(gate, 100, settings.max_request_bytes)
        await people.write(Statement(f"MATCH (q:{QUARANTINE_LABEL}) SET q.replaying = null"))

        async def engine_away(*_: Any) -> tuple[bool, dict[str, Any]]:
            return True, {"error_code": "BACKEND_UNAVAILABLE", "message": "away"}

        replayed = await quarantine.replay(ReplayQuarantineRequest(), engine_away)
        assert [(o.id, o.error_code) for o in replayed.outcomes] == [(held["id"], "BACKEND_UNAVAILABLE")]
        rows = await people.read(Statement(f"MATCH (q:{QUARANTINE_LABEL}) RETURN properties(q) AS q"))
        assert [(row["q"]["id"], row["q"].get("replaying"), row["q"].get("replays")) for row in rows] == [
            (held["id"], None, None)  # as it was: claim let go, no replay counted
        ]


async def test_two_replays_at_once_try_each_still_refused_entry_once(
    settings: Settings, people: GraphBackend, tmp_path: Path
) -> None:
    """Issue 26, item 1: two operators on two gates replay the same label at the same moment. Entries that now
    succeed are written once; each still refused one (its type check fails; its agent was removed) is tried by one
    replay only: it is in exactly one answer, and its `replays` count is 1. Before, a refused entry let its claim
    go when its try ended, and the other replay, which had picked it at its start, tried it again."""
    writer = Grant(tools=("read", "write"), labels=("Vehicle",), relationship_types=())
    path = _agents(tmp_path / "agents.toml", cars=writer, bikes=writer, operator=Grant())
    settings = strict(settings, agents_file=path)
    async with open_client(settings.model_copy(update={"agent": "cars"}), "in_process") as cars:
        for number in range(6):
            await rejected(cars, "write_node", vehicle(f"OK-{number}"))
            await rejected(cars, "write_node", vehicle(f"TYPE-{number}", wheels="four"))
    async with open_client(settings.model_copy(update={"agent": "bikes"}), "in_process") as bikes:
        for number in range(6):
            await rejected(bikes, "write_node", vehicle(f"GONE-{number}"))
    _agents(path, cars=writer, operator=Grant())  # bikes is no longer granted: its entries stay refused
    await load_into_graph(people, read_sources([VEHICLE]))
    reports: list[dict[str, Any]] = []

    async def replay(admin: Client) -> None:
        reports.append(await ok(admin, "replay_quarantine", {"label": "Vehicle"}))

    operator = settings.model_copy(update={"agent": "operator"})
    async with open_client(operator, "in_process") as first, open_client(operator, "in_process") as second:
        async with anyio.create_task_group() as tasks:  # both sessions are open: the two calls start together
            tasks.start_soon(replay, first)
            tasks.start_soon(replay, second)
        left = await entries(first)
    tried = [entry for report in reports for entry in own_tries(report)]
    assert len(tried) == len(set(tried)) == 18, sorted(tried)  # each entry tried by exactly one replay
    written = [o for report in reports for o in report["outcomes"] if o["status"] == "written"]
    assert len(written) == 6 and set(await vehicles(people)) == {f"OK-{n}" for n in range(6)}
    assert sorted(e["error_code"] for e in left) == ["PERMISSION_DENIED"] * 6 + ["SCHEMA_TYPE_MISMATCH"] * 6
    assert [e["replays"] for e in left] == [1] * 12  # each tried once


# The statement a replay picks its entries with, and the one that ends its claims (the Bolt double holds them).
PICK = "ORDER BY seq ASC"
END = "SET q.replaying = null, q.claimed_by = null"


async def five_entries(settings: Settings, people: GraphBackend) -> list[str]:
    """Five kept vehicles, oldest first, then their label registered: a replay writes three (OK-n) and the two
    whose type check fails (TYPE-n) stay refused."""
    async with open_client(settings, "in_process") as writer:
        for plate in ("OK-0", "TYPE-0", "OK-1", "TYPE-1", "OK-2"):
            wheels = {"wheels": "four"} if plate.startswith("TYPE") else {}
            await rejected(writer, "write_node", vehicle(plate, **wheels))
        kept = [entry["id"] for entry in reversed(await entries(writer))]  # oldest first
    await load_into_graph(people, read_sources([VEHICLE]))
    return kept


def own_tries(answer: dict[str, Any]) -> list[str]:
    """The entries a replay tried itself (not those it answers as tried by another replay at once)."""
    return [outcome["id"] for outcome in answer["outcomes"] if not outcome.get("by_another_replay")]


async def until_tried(graph: GraphBackend, written: int, refused: int) -> None:
    """Until a replay has tried every entry: `written` vehicles, and `refused` entries that count one try."""
    while True:
        rows = await graph.read(Statement(f"MATCH (q:{QUARANTINE_LABEL}) WHERE q.replays = 1 RETURN q.id AS id"))
        if len(rows) == refused and len(await vehicles(graph)) == written:
            return
        await anyio.sleep(0.02)


@pytest.mark.parametrize("engine", ["bolt"], indirect=True)
@pytest.mark.parametrize("held", [False, True], ids=["at-once", "read-held"])
async def test_two_gate_processes_replaying_at_once_try_each_entry_once(
    settings: Settings, people: GraphBackend, held: bool
) -> None:
    """Issue 36, item 1: two operators on two gate processes press "replay" on the same five entries at the same
    moment; each entry is tried once, whenever the engine runs each replay's read. Held: the Bolt double holds
    the read of the replay that arrived first until the other has tried and settled all five (and holds that
    one's end until the first has answered). Before, the held replay read a claim count that already held the
    other's try, and tried the two still refused entries again."""
    settings = strict(settings, agent="fleet-a")
    kept = await five_entries(settings, people)
    faults = bolt_faults(settings)
    answers: list[tuple[str, dict[str, Any]]] = []
    answered = {"early": anyio.Event(), "late": anyio.Event()}

    async def replay(name: str, admin: Client) -> None:
        answers.append((name, await ok(admin, "replay_quarantine", {"label": "Vehicle"})))
        answered[name].set()

    operator = settings.model_copy(update={"agent": "operator"})
    try:
        async with open_client(operator, "stdio") as early, open_client(operator, "stdio") as late:
            pick = faults.arm(Action.HOLD, match=PICK) if held else None
            end = faults.arm(Action.HOLD, match=END) if held else None
            with anyio.fail_after(120):
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(replay, "early", early)
                    if pick is not None:  # the early call has arrived; its read waits in the engine's queue
                        while not pick.reached.is_set():
                            await anyio.sleep(0.01)
                    tasks.start_soon(replay, "late", late)
                    if pick is not None and end is not None:
                        await until_tried(people, written=3, refused=2)  # the late replay tried all five
                        pick.release()
                        await answered["early"].wait()
                        end.release()
            left = await entries(early)
    finally:
        faults.clear()
    tried = [entry for _, answer in answers for entry in own_tries(answer)]
    assert sorted(tried) == sorted(kept), answers  # each entry tried by exactly one replay
    for _, answer in answers:  # each answer oldest first
        ids = own_tries(answer)
        assert ids == [entry for entry in kept if entry in ids]
    assert set(await vehicles(people)) == {"OK-0", "OK-1", "OK-2"}
    assert [(e["error_code"], e["replays"]) for e in left] == [("SCHEMA_TYPE_MISMATCH", 1)] * 2  # one try each
    if held:  # the early replay answered first, having tried none: the late one, which ran while it waited, did
        assert [(name, answer["replayed"]) for name, answer in answers] == [("early", 0), ("late", 5)]


@pytest.mark.parametrize("engine", ["bolt"], indirect=True)
async def test_a_replay_that_arrived_before_another_ended_tries_none_of_its_entries_again(
    settings: Settings, people: GraphBackend
) -> None:
    """Issue 36, item 1, by arrival: the early call reaches its gate first, but the engine runs its read only after
    the late replay has tried all five and ended (its answer is back). The calls arrived at once, so the early
    replay tries nothing again: it answers the two still refused entries as the late replay's try left them,
    marked, and each shows one try. Before, it read a claim count that held the ended replay's claim and tried
    them again."""
    settings = strict(settings, agent="fleet-a")
    kept = await five_entries(settings, people)
    faults = bolt_faults(settings)
    operator = settings.model_copy(update={"agent": "operator"})
    answers: dict[str, dict[str, Any]] = {}

    async def replay(name: str, admin: Client) -> None:
        answers[name] = await ok(admin, "replay_quarantine", {"label": "Vehicle"})

    try:
        async with open_client(operator, "stdio") as early, open_client(operator, "stdio") as late:
            pick = faults.arm(Action.HOLD, match=PICK)  # the first read only: the early replay's
            with anyio.fail_after(120):
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(replay, "early", early)
                    while not pick.reached.is_set():  # the early call has arrived; its read waits in the engine
                        await anyio.sleep(0.01)
                    await replay("late", late)  # tried all five and ended: its answer is back
                    pick.release()
            left = await entries(early)
    finally:
        faults.clear()
    assert [(e["error_code"], e["replays"]) for e in left] == [("SCHEMA_TYPE_MISMATCH", 1)] * 2  # one try each
    assert set(await vehicles(people)) == {"OK-0", "OK-1", "OK-2"}
    assert (answers["late"]["replayed"], own_tries(answers["late"])) == (5, kept)
    early_answer = answers["early"]
    assert (early_answer["replayed"], early_answer["written"], early_answer["rejected"]) == (0, 0, 0)
    refused = [kept[1], kept[3]]
    assert [(o["id"], o["status"], o["error_code"], o["by_another_replay"]) for o in early_answer["outcomes"]] == [
        (entry, "rejected", "SCHEMA_TYPE_MISMATCH", True) for entry in refused
    ]
    assert [o["result"]["error_code"] for o in early_answer["outcomes"]] == ["SCHEMA_TYPE_MISMATCH"] * 2


# The write guard's statement before a write or admin call's handler runs: the agent's rate bucket.
RATE = "b.per_minute = $per_minute AS same"


@pytest.mark.parametrize("engine", ["bolt"], indirect=True)
async def test_a_replay_held_in_its_gate_before_it_ran_counts_from_its_call_s_arrival(
    settings: Settings, people: GraphBackend, tmp_path: Path
) -> None:
    """The early call reaches its gate first, and the gate's own work before the replay begins (here the write
    guard's rate bucket, held in the engine) lasts until the late replay has tried all five and answered. The call
    arrived before the late replay ended, so the early replay tries nothing again: it answers the two still refused
    entries as the late replay left them, and each shows one try. Before, a replay took its arrival as it began,
    after that work (on a session's first call, after its tool table was built too: 100 to 250 ms on a loaded
    machine, so two gate processes pressed at once tried the refused entries twice), and counted as a later press."""
    path = _agents(tmp_path / "agents.toml", **{"fleet-a": Grant()}, operator=Grant(max_writes_per_minute=100))
    settings = strict(settings, agent="fleet-a", agents_file=path)
    kept = await five_entries(settings, people)
    faults = bolt_faults(settings)
    operator = settings.model_copy(update={"agent": "operator"})
    answers: dict[str, dict[str, Any]] = {}

    async def replay(name: str, admin: Client) -> None:
        answers[name] = await ok(admin, "replay_quarantine", {"label": "Vehicle"})

    try:
        async with open_client(operator, "in_process") as early, open_client(operator, "in_process") as late:
            rate = faults.arm(Action.HOLD, match=RATE)  # the first call's only: the early replay's
            with anyio.fail_after(120):
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(replay, "early", early)
                    while not rate.reached.is_set():  # the early call has arrived; its guard waits in the engine
                        await anyio.sleep(0.01)
                    await replay("late", late)  # tried all five and ended: its answer is back
                    rate.release()
            left = await entries(early)
    finally:
        faults.clear()
    assert [(e["error_code"], e["replays"]) for e in left] == [("SCHEMA_TYPE_MISMATCH", 1)] * 2  # one try each
    assert (answers["late"]["replayed"], own_tries(answers["late"])) == (5, kept)
    early_answer = answers["early"]
    assert (early_answer["replayed"], early_answer["written"], early_answer["rejected"]) == (0, 0, 0)
    assert [(o["id"], o["by_another_replay"]) for o in early_answer["outcomes"]] == [(kept[1], True), (kept[3], True)]


async def test_a_replay_that_arrives_after_another_ended_tries_the_still_refused_entries_again(
    settings: Settings, people: GraphBackend
) -> None:
    """A later press is a new try: the rule passes over only what a replay running at once tried. A replay that
    arrives after another has ended (its answer back, and the engine's clock past that end) tries the still refused
    entries again, and each then shows two tries."""
    settings = strict(settings, agent="fleet-a")
    kept = await five_entries(settings, people)
    async with open_client(settings.model_copy(update={"agent": "operator"}), "in_process") as admin:
        first = await ok(admin, "replay_quarantine", {"label": "Vehicle"})
        assert (first["replayed"], first["written"], first["rejected"]) == (5, 3, 2)
        await until_engine_passes_the_last_try(people)
        again = await ok(admin, "replay_quarantine", {"label": "Vehicle"})
        left = await entries(admin)
    assert (again["replayed"], again["written"], again["rejected"]) == (2, 0, 2)
    assert [(o["id"], o["by_another_replay"]) for o in again["outcomes"]] == [(kept[1], False), (kept[3], False)]
    assert [(e["error_code"], e["replays"]) for e in left] == [("SCHEMA_TYPE_MISMATCH", 2)] * 2


async def until_engine_passes_the_last_try(graph: GraphBackend) -> None:
    """Until the engine's clock is two seconds past the last try it recorded. A replay reckons its arrival early
    by the time its read's answer took to come back (and the clock's tick), so that it never tries again what
    another tried at once: a press right after another's answer may still count as at once."""
    tried = Statement(f"MATCH (q:{QUARANTINE_LABEL}) RETURN max(q.tried_at) AS last")
    [row] = await graph.read(tried)
    assert isinstance(row["last"], int), row
    with anyio.fail_after(30):
        while (await graph.read(Statement(f"RETURN {graph.dialect.clock} AS now")))[0]["now"] < row["last"] + 2000:
            await anyio.sleep(0.1)

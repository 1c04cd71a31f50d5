"""Conflicts and history (issue 12, items 3 and 4) through real MCP client sessions on every engine tier: each
policy, the answer listing what a write met, resolve_conflict, and concurrent writers meeting one conflict
with nothing lost (every accepted change is in the history, each replacing the value the one before it left).

tests/schemas/conflicts/registry.json sets the policies: Person.email reject, Person.city keep_both,
Person.rank higher_confidence_wins, Person.age the gate's default (last_writer_wins), Rumour keep_both for
every property, KNOWS higher_confidence_wins (its `place` keep_both).
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.conftest import ok, open_client, rejected
from write_gate.core.cypher.statement import Statement
from write_gate.core.history import value_changes
from write_gate.engines import GraphBackend
from write_gate.services import pipeline
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources
from write_gate.surface.server import build_server

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

SCHEMAS = Path(__file__).parent.parent / "schemas" / "conflicts"
API = {"source": "api", "extraction_method": "manual", "reliability": 1.0}
LLM = {"source": "llm", "extraction_method": "llm", "reliability": 0.1}


@pytest.fixture
async def loaded(settings: Settings, graph: GraphBackend) -> Settings:
    await load_into_graph(graph, read_sources([SCHEMAS]))
    return settings


@pytest.fixture
async def api_bot(loaded: Settings) -> AsyncIterator[Client]:
    async with open_client(loaded.model_copy(update={"agent": "api-bot"}), "in_process") as client:
        yield client


@pytest.fixture
async def llm_bot(loaded: Settings) -> AsyncIterator[Client]:
    async with open_client(loaded.model_copy(update={"agent": "llm-bot"}), "in_process") as client:
        yield client


def person(name: str, properties: dict[str, Any], prov: dict[str, Any], label: str = "Person") -> dict[str, Any]:
    return {"label": label, "merge_keys": {"name": name}, "properties": properties, **prov}


async def value(graph: GraphBackend, name: str, prop: str, label: str = "Person") -> Any:
    [row] = await graph.read(
        Statement(f"MATCH (n:`{label}` {{name: $name}}) RETURN properties(n) AS p", {"name": name})
    )
    return row["p"].get(prop)


async def changes(graph: GraphBackend, prop: str) -> list[dict[str, Any]]:
    """The recorded changes of `prop`, one by one (a record holds every value its write changed), by revision."""
    rows = await graph.read(
        Statement(
            "MATCH (h:WriteGateChange) WHERE $p IN h.properties RETURN properties(h) AS h ORDER BY h.revision",
            {"p": prop},
        )
    )
    return [c for row in rows for c in value_changes(row["h"]) if c["property"] == prop]


async def conflict_records(graph: GraphBackend) -> list[dict[str, Any]]:
    rows = await graph.read(Statement("MATCH (c:WriteGateConflict) RETURN properties(c) AS c ORDER BY c.at"))
    return [row["c"] for row in rows]


async def test_last_writer_wins_writes_and_tells_the_writer_what_it_replaced(
    api_bot: Client, llm_bot: Client, graph: GraphBackend
) -> None:
    first = await ok(api_bot, "write_node", person("Alice", {"age": 36}, API))
    assert "conflicts" not in first  # a write that met none answers as it always did
    second = await ok(llm_bot, "write_node", person("Alice", {"age": 99}, LLM))
    [met] = second["conflicts"]
    assert {k: met[k] for k in ("property", "policy", "outcome", "current_value")} == {
        "property": "age",
        "policy": "last_writer_wins",
        "outcome": "overwritten",
        "current_value": 36,
    }
    assert (met["current"]["agent"], met["current"]["source"], met["current"]["confidence"]) == (
        "api-bot",
        "api",
        first["confidence"],
    )
    assert await value(graph, "Alice", "age") == 99
    [record] = await conflict_records(graph)
    assert (record["conflict_id"], record["status"], record["incoming_value"]) == (met["conflict_id"], "settled", 99)
    # The history: created at 36, then 36 -> 99, each with its writer's claim.
    created, changed = await changes(graph, "age")
    assert (created.get("before"), created["after"], created["claim"][0]) == (None, 36, "api-bot")
    assert (changed["before"], changed["after"], changed["before_claim"][0], changed["claim"][0]) == (
        36,
        99,
        "api-bot",
        "llm-bot",
    )
    # The same writer correcting its own value is no conflict; the same value again is no change.
    assert "conflicts" not in await ok(llm_bot, "write_node", person("Alice", {"age": 98}, LLM))
    await ok(llm_bot, "write_node", person("Alice", {"age": 98}, LLM))
    assert [c["after"] for c in await changes(graph, "age")] == [36, 99, 98]


async def test_higher_confidence_wins_keeps_the_surer_value(
    api_bot: Client, llm_bot: Client, graph: GraphBackend
) -> None:
    await ok(api_bot, "write_node", person("Bob", {"rank": 1}, API))
    weaker = await ok(llm_bot, "write_node", person("Bob", {"rank": 5, "age": 20}, LLM))
    assert [(c["property"], c["outcome"]) for c in weaker["conflicts"]] == [("rank", "kept")]
    assert (await value(graph, "Bob", "rank"), await value(graph, "Bob", "age")) == (1, 20)  # the rest is written
    surer = {**LLM, "source": "registry", "extraction_method": "manual", "reliability": 1.0}
    stronger = await ok(llm_bot, "write_node", person("Bob", {"rank": 7}, surer))  # a tie goes to the newer
    assert [(c["property"], c["outcome"]) for c in stronger["conflicts"]] == [("rank", "overwritten")]
    assert await value(graph, "Bob", "rank") == 7


async def test_a_stale_strong_claim_decays_below_a_fresh_weak_one(
    api_bot: Client, llm_bot: Client, graph: GraphBackend
) -> None:
    """Sighting: higher_confidence_wins with a 30-day half-life. The API's claim, fresh, keeps its value against
    the llm's guess; aged by more than twenty half-lives, it loses to the same guess."""
    await ok(api_bot, "write_node", person("S1", {"place": "Oslo"}, API, label="Sighting"))
    fresh = await ok(llm_bot, "write_node", person("S1", {"place": "Rome"}, LLM, label="Sighting"))
    assert [c["outcome"] for c in fresh["conflicts"]] == ["kept"]
    await graph.write(  # the test moves the claim back to 2025 (the tools take no time)
        Statement(
            "MATCH (n:Sighting {name: 'S1'}) SET n._p_place = [n._p_place[0], n._p_place[1], n._p_place[2], "
            "n._p_place[3], $at]",
            {"at": "2025-01-01T00:00:00.000Z"},
        )
    )
    stale = await ok(llm_bot, "write_node", person("S1", {"place": "Rome"}, LLM, label="Sighting"))
    assert [c["outcome"] for c in stale["conflicts"]] == ["overwritten"]
    assert await value(graph, "S1", "place", label="Sighting") == "Rome"


async def test_reject_refuses_the_whole_write_with_the_current_values_provenance(
    api_bot: Client, llm_bot: Client, graph: GraphBackend
) -> None:
    await ok(api_bot, "write_node", person("Carol", {"email": "carol@api.example"}, API))
    out = await rejected(llm_bot, "write_node", person("Carol", {"email": "c@llm.example", "age": 3}, LLM))
    assert out["error_code"] == "CONFLICT"
    [refused] = out["details"]["conflicts"]
    assert (refused["property"], refused["current_value"], refused["current"]["agent"]) == (
        "email",
        "carol@api.example",
        "api-bot",
    )
    # Nothing of the refused write landed, and no record claims it did.
    assert (await value(graph, "Carol", "email"), await value(graph, "Carol", "age")) == ("carol@api.example", None)
    assert await changes(graph, "age") == [] and await conflict_records(graph) == []
    # The writer that owns the value may still change it.
    await ok(api_bot, "write_node", person("Carol", {"email": "carol@new.example"}, API))


async def test_a_weaker_writer_restating_a_protected_value_cannot_take_it_over(
    api_bot: Client, llm_bot: Client, graph: GraphBackend
) -> None:
    """Found by a black-box audit: the llm restated the api's values, which handed it their claims, then changed
    them as their own writer (email, reject) and over its own low confidence (rank, higher_confidence_wins)."""
    await ok(api_bot, "write_node", person("Dora", {"email": "dora@api.example", "rank": 3}, API))
    restated = await ok(llm_bot, "write_node", person("Dora", {"email": "dora@api.example", "rank": 3}, LLM))
    assert "conflicts" not in restated
    claims = await value(graph, "Dora", "_p_email"), await value(graph, "Dora", "_p_rank")
    assert [claim[0] for claim in claims] == ["api-bot", "api-bot"]  # the stronger claims stay
    refused = await rejected(llm_bot, "write_node", person("Dora", {"email": "evil@llm.example"}, LLM))
    assert refused["error_code"] == "CONFLICT"
    kept = await ok(llm_bot, "write_node", person("Dora", {"rank": 99}, LLM))
    assert [(c["property"], c["outcome"]) for c in kept["conflicts"]] == [("rank", "kept")]
    assert (await value(graph, "Dora", "email"), await value(graph, "Dora", "rank")) == ("dora@api.example", 3)


async def test_keep_both_holds_the_incoming_claim_until_resolved(
    api_bot: Client, llm_bot: Client, graph: GraphBackend
) -> None:
    await ok(api_bot, "write_node", person("Dan", {"city": "Oslo"}, API))
    held = await ok(llm_bot, "write_node", person("Dan", {"city": "Rome"}, LLM))
    [met] = held["conflicts"]
    assert (met["outcome"], met["current_value"]) == ("open", "Oslo")
    assert await value(graph, "Dan", "city") == "Oslo"
    [record] = await conflict_records(graph)
    assert (record["status"], record["incoming_value"], record["incoming_claim"][0]) == ("open", "Rome", "llm-bot")

    taken = await ok(api_bot, "resolve_conflict", {"conflict_id": met["conflict_id"], "pick": "incoming"})
    assert (taken["value"], taken["claim"]["agent"], taken["claim"]["source"]) == ("Rome", "llm-bot", "llm")
    assert await value(graph, "Dan", "city") == "Rome"
    assert (await value(graph, "Dan", "_p_city"))[:3] == ["llm-bot", "llm", "llm"]  # its own claim, not the resolver's
    found = await ok(api_bot, "search_nodes", {"query": "rome"})  # the search text follows the value
    assert [e["name"] for e in found["entities"]] == ["Dan"]
    [record] = await conflict_records(graph)
    assert (record["status"], record["picked"], record["resolved_by"]) == ("resolved", "incoming", "api-bot")
    resolve = [c for c in await changes(graph, "city") if c["op"] == "resolve"]
    assert [(c["before"], c["after"], c["agent"], c["claim"][0]) for c in resolve] == [
        ("Oslo", "Rome", "api-bot", "llm-bot")
    ]
    again = await rejected(api_bot, "resolve_conflict", {"conflict_id": met["conflict_id"], "pick": "current"})
    assert (again["error_code"], again["details"]["reason"]) == ("INVALID_INPUT", "not_open")
    unknown = await rejected(api_bot, "resolve_conflict", {"conflict_id": "nope", "pick": "current"})
    assert unknown["details"]["reason"] == "unknown_conflict"


async def test_keeping_the_current_value_closes_the_conflict_and_changes_nothing(
    api_bot: Client, llm_bot: Client, graph: GraphBackend
) -> None:
    # Rumour: keep_both for every property, from its entry.
    await ok(api_bot, "write_node", person("R1", {"claim": "true"}, API, label="Rumour"))
    [met] = (await ok(llm_bot, "write_node", person("R1", {"claim": "false"}, LLM, label="Rumour")))["conflicts"]
    kept = await ok(llm_bot, "resolve_conflict", {"conflict_id": met["conflict_id"], "pick": "current"})
    assert (kept["value"], kept["claim"]["agent"]) == ("true", "api-bot")
    assert await value(graph, "R1", "claim", label="Rumour") == "true"
    assert [r["status"] for r in await conflict_records(graph)] == ["resolved"]


async def test_a_relationship_property_meets_its_types_policy(
    api_bot: Client, llm_bot: Client, graph: GraphBackend
) -> None:
    for name in ("Eve", "Fay"):
        await ok(api_bot, "write_node", person(name, {}, API))
    knows = {"type": "KNOWS", "from_label": "Person", "from_keys": {"name": "Eve"}, "to_label": "Person"}
    knows["to_keys"] = {"name": "Fay"}
    await ok(api_bot, "write_relationship", {**knows, "properties": {"since": 2001}, **API})
    out = await ok(llm_bot, "write_relationship", {**knows, "properties": {"since": 1999}, **LLM})
    assert [(c["property"], c["outcome"], c["current_value"]) for c in out["conflicts"]] == [("since", "kept", 2001)]
    [row] = await graph.read(Statement("MATCH ()-[r:KNOWS]->() RETURN r.since AS since"))
    assert row["since"] == 2001
    [record] = await conflict_records(graph)
    assert (record["subject"], record["label"], record["from_key"], record["to_key"]) == (
        "relationship",
        "KNOWS",
        '{"name":"Eve"}',
        '{"name":"Fay"}',
    )


@pytest.mark.parametrize("chunk_items", [pipeline.CHUNK_ITEMS, 1], ids=["one-chunk", "chunks-of-1"])
async def test_batches_meet_conflicts_as_single_writes_do(
    api_bot: Client, llm_bot: Client, graph: GraphBackend, chunk_items: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pipeline, "CHUNK_ITEMS", chunk_items)
    await ok(api_bot, "write_node", person("Gus", {"email": "g@api", "age": 1}, API))
    out = await ok(
        llm_bot,
        "write_nodes",
        {"items": [person("Gus", {"age": 2}, LLM), person("Gus", {"email": "g@llm"}, LLM), person("Hal", {}, LLM)]},
    )
    first, second, third = out["items"]
    assert first["status"] == "written" and first["conflicts"][0]["current_value"] == 1
    assert (second["status"], second["error_code"]) == ("rejected", "CONFLICT")
    assert third["status"] == "written" and third.get("conflicts") is None
    assert (await value(graph, "Gus", "age"), await value(graph, "Gus", "email")) == (2, "g@api")


async def test_concurrent_writers_meeting_one_conflict_lose_nothing(loaded: Settings, graph: GraphBackend) -> None:
    """Eight agents write Ivy's age at once, twice each. Every accepted write is in the history, and the
    history is one chain: each change replaced the value the change before it left (no write decided on a
    stale value landed), the last one is what the node holds, and every conflict is recorded."""
    answers: list[dict[str, Any]] = []

    async def agent(n: int) -> None:
        settings = loaded.model_copy(update={"agent": f"bot-{n}"})
        async with open_client(settings, "in_process") as client:
            for round_ in range(2):
                args = person("Ivy", {"age": 100 * round_ + n, "rank": n}, {**LLM, "reliability": n / 10})
                result = await client.call_tool("write_node", args)
                answers.append(result.structured_content or {})

    with anyio.fail_after(300):
        async with anyio.create_task_group() as tasks:
            for n in range(8):
                tasks.start_soon(agent, n)
    written = [a for a in answers if a.get("status") == "written"]
    refused = [a for a in answers if a.get("status") != "written"]
    assert all(a["error_code"] == "CONFLICT" and a["details"]["reason"] == "contention" for a in refused)
    assert len(written) >= 8
    chain = await changes(graph, "age")
    assert [c["revision"] for c in chain] == sorted({c["revision"] for c in chain})  # one record per revision
    for before, after in zip(chain, chain[1:], strict=False):
        assert after.get("before") == before["after"]
    assert chain[-1]["after"] == await value(graph, "Ivy", "age")
    assert len(chain) == len(written)  # every write changed age (each agent's values differ)
    # Every change over another agent's value was a conflict, and each one is recorded.
    met = sum(c["before_claim"][0] != c["claim"][0] for c in chain[1:])
    assert len([c for c in await conflict_records(graph) if c["property"] == "age"]) == met > 0
    # rank is higher_confidence_wins: whatever the order, the surest writer's value stands.
    assert await value(graph, "Ivy", "rank") == 7


async def test_a_merge_holds_the_merged_nodes_differing_value_open(
    api_bot: Client, llm_bot: Client, graph: GraphBackend
) -> None:
    """The survivor keeps its value and the merged node's is held beside it with its claim, an open conflict a
    resolve_conflict can take: a merge loses nothing, whatever it leaves in place."""
    await ok(api_bot, "write_node", person("Jo", {"age": 30}, API))
    await ok(llm_bot, "write_node", person("Joe", {"age": 31, "nickname": "J"}, LLM))
    merge = {
        "survivor": {"label": "Person", "merge_keys": {"name": "Jo"}},
        "merged": [{"label": "Person", "merge_keys": {"name": "Joe"}}],
    }
    merged = await ok(api_bot, "merge_entities", merge)
    # Its name differs too, and is reported, but is the merged node's identity (its alias): not held.
    named, conflict = sorted(merged["conflicts"], key=lambda c: c["property"] != "name")
    assert (named["property"], named["conflict_id"]) == ("name", None)
    assert (conflict["property"], conflict["survivor_value"], conflict["merged_value"]) == ("age", 30, 31)
    listed = await ok(api_bot, "list_conflicts", {"property": "age"})
    [held] = listed["conflicts"]
    assert held["conflict_id"] == conflict["conflict_id"]
    assert (held["current_value"], held["incoming_value"], held["incoming_claim"]["agent"]) == (30, 31, "llm-bot")
    assert held["subject"]["merge_keys"] == {"name": "Jo"}
    await ok(api_bot, "resolve_conflict", {"conflict_id": conflict["conflict_id"], "pick": "incoming"})
    assert await value(graph, "Jo", "age") == 31
    assert (await value(graph, "Jo", "_p_age"))[:2] == ["llm-bot", "llm"]
    assert await value(graph, "Jo", "nickname") == "J"  # what only the merged node had was copied


def met(start: str, end: str, place: str, prov: dict[str, Any]) -> dict[str, Any]:
    """KNOWS with its `place` (keep_both, the property's own policy over the type's higher_confidence_wins)."""
    ends = {"from_label": "Person", "from_keys": {"name": start}, "to_label": "Person", "to_keys": {"name": end}}
    return {"type": "KNOWS", **ends, "properties": {"place": place}, **prov}


async def relationship(graph: GraphBackend, start: str, end: str) -> dict[str, Any] | None:
    rows = await graph.read(
        Statement(
            "MATCH (:Person {name: $a})-[r:KNOWS]->(:Person {name: $b}) RETURN properties(r) AS r",
            {"a": start, "b": end},
        )
    )
    return rows[0]["r"] if rows else None


async def test_a_relationships_held_value_is_resolved_onto_the_relationship(
    loaded: Settings, api_bot: Client, llm_bot: Client, graph: GraphBackend
) -> None:
    for name in ("Eve", "Fay", "Gil"):
        await ok(api_bot, "write_node", person(name, {}, API))
    await ok(api_bot, "write_relationship", met("Eve", "Fay", "Oslo", API))
    held = await ok(llm_bot, "write_relationship", met("Eve", "Fay", "Rome", LLM))
    [conflict] = held["conflicts"]
    assert (conflict["property"], conflict["outcome"], conflict["current_value"]) == ("place", "open", "Oslo")
    listed = (await ok(api_bot, "list_conflicts", {"status": "open"}))["conflicts"]
    assert [c["subject"]["type"] for c in listed] == ["KNOWS"]

    taken = await ok(api_bot, "resolve_conflict", {"conflict_id": conflict["conflict_id"], "pick": "incoming"})
    assert (taken["value"], taken["claim"]["agent"], taken["claim"]["source"]) == ("Rome", "llm-bot", "llm")
    stored = await relationship(graph, "Eve", "Fay")
    assert stored is not None and stored["place"] == "Rome"
    assert stored["_p_place"][:3] == ["llm-bot", "llm", "llm"]  # the held claim, not the resolver's
    [record] = [r for r in await conflict_records(graph) if r["conflict_id"] == conflict["conflict_id"]]
    assert (record["status"], record["picked"], record["resolved_by"]) == ("resolved", "incoming", "api-bot")
    resolve = [c for c in await changes(graph, "place") if c["op"] == "resolve"]
    assert [(c["before"], c["after"], c["agent"]) for c in resolve] == [("Oslo", "Rome", "api-bot")]

    # A relationship deleted before the resolve: nothing is written, and the conflict stays open.
    await ok(api_bot, "write_relationship", met("Eve", "Gil", "Oslo", API))
    [gone] = (await ok(llm_bot, "write_relationship", met("Eve", "Gil", "Rome", LLM)))["conflicts"]
    async with open_client(loaded.model_copy(update={"agent": "api-bot"}), "in_process", "memory") as memory:
        await ok(memory, "delete_relations", {"relations": [{"from": "Eve", "to": "Gil", "relationType": "KNOWS"}]})
    refused = await rejected(api_bot, "resolve_conflict", {"conflict_id": gone["conflict_id"], "pick": "incoming"})
    assert (refused["error_code"], refused["details"]["reason"]) == ("INVALID_INPUT", "subject_gone")
    assert await relationship(graph, "Eve", "Gil") is None
    [record] = [r for r in await conflict_records(graph) if r["conflict_id"] == gone["conflict_id"]]
    assert record["status"] == "open"


async def test_a_node_merged_away_or_a_damaged_record_is_refused_and_nothing_written(
    api_bot: Client, llm_bot: Client, graph: GraphBackend
) -> None:
    await ok(api_bot, "write_node", person("Hana", {"city": "Oslo"}, API))
    [merged_away] = (await ok(llm_bot, "write_node", person("Hana", {"city": "Rome"}, LLM)))["conflicts"]
    await ok(api_bot, "write_node", person("Hannah", {}, API))
    merge = {"survivor": {"label": "Person", "merge_keys": {"name": "Hannah"}}}
    await ok(api_bot, "merge_entities", {**merge, "merged": [{"label": "Person", "merge_keys": {"name": "Hana"}}]})
    refused = await rejected(
        api_bot, "resolve_conflict", {"conflict_id": merged_away["conflict_id"], "pick": "incoming"}
    )
    assert (refused["error_code"], refused["details"]["reason"]) == ("INVALID_INPUT", "subject_gone")
    assert await value(graph, "Hannah", "city") == "Oslo"  # the survivor took the merged node's value; no Rome

    await ok(api_bot, "write_node", person("Ivo", {"city": "Oslo"}, API))
    [damaged] = (await ok(llm_bot, "write_node", person("Ivo", {"city": "Rome"}, LLM)))["conflicts"]
    await graph.write(
        Statement(
            "MATCH (c:WriteGateConflict {conflict_id: $id}) SET c.incoming_claim = null",
            {"id": damaged["conflict_id"]},
        )
    )
    refused = await rejected(api_bot, "resolve_conflict", {"conflict_id": damaged["conflict_id"], "pick": "incoming"})
    assert (refused["error_code"], refused["details"]["reason"]) == ("INVALID_INPUT", "damaged")
    assert await value(graph, "Ivo", "city") == "Oslo"


class Interleaved:
    """The resolving gate's engine, with another gate's call run just before a chosen statement (`times` times):
    two concurrent agents' interleaving made certain instead of left to the scheduler. Every statement runs on the
    real engine, the other gate's included."""

    def __init__(self, inner: GraphBackend, before: str, other: Any, times: int = 1) -> None:
        self.inner, self.before, self.other, self.times = inner, before, other, times
        self.dialect = inner.dialect

    async def write(self, statement: Statement) -> list[dict[str, Any]]:
        if self.before in statement.text and self.times > 0:
            self.times -= 1
            await self.other()
        return await self.inner.write(statement)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@asynccontextmanager
async def resolver(loaded: Settings) -> AsyncIterator[tuple[Client, Any]]:
    """A client of a gate built here, and that gate (so a test can interleave another agent's call)."""
    server = build_server(loaded.model_copy(update={"agent": "resolver"}), auto_migrate=False)
    async with Client(server) as client:
        yield client, server.services.gate


KEEP_CURRENT_WRITE = "RETURN count(c) AS resolved"
TAKE_INCOMING_WRITE = "RETURN count(n) AS resolved"


async def test_a_resolve_that_loses_the_race_to_another_resolver_writes_nothing(
    loaded: Settings, api_bot: Client, llm_bot: Client, graph: GraphBackend
) -> None:
    async with resolver(loaded) as (client, gate):
        for name, pick, before, other in (
            ("Jan", "current", KEEP_CURRENT_WRITE, "incoming"),
            ("Kim", "incoming", TAKE_INCOMING_WRITE, "current"),
        ):
            await ok(api_bot, "write_node", person(name, {"city": "Oslo"}, API))
            [held] = (await ok(llm_bot, "write_node", person(name, {"city": "Rome"}, LLM)))["conflicts"]
            conflict = {"conflict_id": held["conflict_id"]}

            async def first(conflict: dict[str, Any] = conflict, other: str = other) -> None:
                await ok(api_bot, "resolve_conflict", {**conflict, "pick": other})

            gate.backend = Interleaved(gate.backend, before, first)
            late = await rejected(client, "resolve_conflict", {**conflict, "pick": pick})
            assert (late["error_code"], late["details"]["reason"]) == ("INVALID_INPUT", "not_open"), name
            assert late["details"]["conflict_status"] == "resolved"
            gate.backend = gate.backend.inner
            [record] = [r for r in await conflict_records(graph) if r["conflict_id"] == held["conflict_id"]]
            assert (record["picked"], record["resolved_by"]) == (other, "api-bot")  # the winner's pick stands
            assert await value(graph, name, "city") == ("Rome" if other == "incoming" else "Oslo")


async def test_a_resolve_reads_again_when_the_subject_moves_and_gives_up_if_it_never_settles(
    loaded: Settings, api_bot: Client, llm_bot: Client, graph: GraphBackend
) -> None:
    async with resolver(loaded) as (client, gate):
        ages = iter(range(100))

        async def another_write(name: str) -> None:
            await ok(api_bot, "write_node", person(name, {"age": next(ages)}, API))

        for name in ("Lea", "Max"):
            await ok(api_bot, "write_node", person(name, {"city": "Oslo"}, API))
        [lea] = (await ok(llm_bot, "write_node", person("Lea", {"city": "Rome"}, LLM)))["conflicts"]
        [max_] = (await ok(llm_bot, "write_node", person("Max", {"city": "Rome"}, LLM)))["conflicts"]

        # Once: the write finds a newer revision, reads the node again, and lands beside the other write.
        gate.backend = Interleaved(gate.backend, TAKE_INCOMING_WRITE, lambda: another_write("Lea"))
        await ok(client, "resolve_conflict", {"conflict_id": lea["conflict_id"], "pick": "incoming"})
        assert gate.backend.times == 0
        assert (await value(graph, "Lea", "city"), await value(graph, "Lea", "age")) == ("Rome", 0)

        # At every attempt: it gives up, having written nothing, and the conflict stays open.
        gate.backend = Interleaved(gate.backend.inner, TAKE_INCOMING_WRITE, lambda: another_write("Max"), times=100)
        busy = await rejected(client, "resolve_conflict", {"conflict_id": max_["conflict_id"], "pick": "incoming"})
        assert (busy["error_code"], busy["details"]["reason"]) == ("CONFLICT", "contention")
        assert await value(graph, "Max", "city") == "Oslo"
        [record] = [r for r in await conflict_records(graph) if r["conflict_id"] == max_["conflict_id"]]
        assert record["status"] == "open"

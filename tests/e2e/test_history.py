"""The change history through a real MCP client on every engine: every delete path (typed delete_<type>, the memory
profile's deletes, merge_entities) and the memory profile's writes leave their records in the same statement,
the same records `core.history` would build from what was there; get_history and list_conflicts read them back,
filtered and paged."""

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from tests.conftest import MATRIX_SCHEMAS, ok, open_client, rejected
from write_gate.core.claims import VALUE_CLAIM_FIELDS, ValueProvenance
from write_gate.core.conflicts import Conflict, Outcome
from write_gate.core.cypher.change_order import numbered
from write_gate.core.cypher.statement import Statement
from write_gate.core.history import (
    Subject,
    WriteContext,
    conflict_records,
    delete_changes,
    set_changes,
    value_changes,
)
from write_gate.core.identity import identity_key
from write_gate.core.registry import ConflictPolicy
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.bundled import bundled
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

RPG = bundled("schemas") / "examples" / "rpg"
PROV = {"source": "dm-notes", "extraction_method": "manual", "reliability": 0.8}
ADA, BOB = identity_key({"name": "Ada"}), identity_key({"name": "Bob"})


async def records(graph: GraphBackend) -> list[dict[str, Any]]:
    """Every change record's values, one by one (`value_changes`), without the order the statement decided."""
    rows = await graph.read(Statement("MATCH (h:WriteGateChange) RETURN properties(h) AS p"))
    return each_value(r["p"] for r in rows)


def each_value(stored: Any) -> list[dict[str, Any]]:
    values = [{k: v for k, v in c.items() if k != "seq"} for record in stored for c in value_changes(record)]
    return sorted(values, key=_order)


def _order(record: dict[str, Any]) -> tuple:
    return (record["subject"], record.get("from_key", ""), record.get("key", ""), record["property"], record["at"])


async def props(graph: GraphBackend, pattern: str) -> dict[str, Any]:
    [row] = await graph.read(Statement(f"MATCH {pattern} RETURN properties(x) AS p"))
    return row["p"]


def node_ref(label: str, name: str) -> dict[str, Any]:
    return {"label": label, "merge_keys": {"name": name}}


def rel_ref(type_: str, start: tuple[str, str], end: tuple[str, str]) -> dict[str, Any]:
    return {
        "label": type_,
        "from_label": start[0],
        "from_keys": {"name": start[1]},
        "to_label": end[0],
        "to_keys": {"name": end[1]},
    }


async def history(client: Client, **args: Any) -> list[dict[str, Any]]:
    return (await ok(client, "get_history", args))["changes"]


# --- delete paths ------------------------------------------------------------------------------------


async def test_a_typed_delete_records_every_value_of_the_node_and_its_relationships(
    settings: Settings, graph: GraphBackend
) -> None:
    await load_into_graph(graph, read_sources([RPG, MATRIX_SCHEMAS]))
    async with open_client(settings, "in_process") as client:
        for place in ("Rivendell", "Mordor"):
            await ok(client, "add_location", {"location": {"name": place}, **PROV})
        npc = {"name": "Gandalf", "role": "Wizard", "status": "Active", "currentLocation": "Rivendell"}
        await ok(client, "add_npc", {"npc": npc, **PROV})
        # A link replaced by an update is a relationship deleted: recorded too.
        first = await props(graph, "(:Npc)-[x:LOCATED_IN]->()")
        await ok(client, "update_npc", {"npc": {"name": "Gandalf", "currentLocation": "Mordor"}, **PROV})
        moved = await history(client, **rel_ref("LOCATED_IN", ("Npc", "Gandalf"), ("Location", "Rivendell")))
        node = await props(graph, "(x:Npc {name: 'Gandalf'})")
        link = await props(graph, "(:Npc)-[x:LOCATED_IN]->()")
        before = await records(graph)
        await ok(client, "delete_npc", {"npc": {"name": "Gandalf"}})
        written = [r for r in await records(graph) if r not in before]
        # The drifted label reads as the write's would: "npc" is Npc.
        changes = await history(client, label="npc", merge_keys={"name": "Gandalf"})
    assert {c["property"]: c["before"] for c in moved} == {k: v for k, v in first.items() if not k.startswith("_")}
    assert {c["op"] for c in moved} == {"delete"}
    change_id, at, agent = written[0]["change_id"], written[0]["at"], written[0]["agent"]
    gandalf = identity_key({"name": "Gandalf"})
    mordor = identity_key({"name": "Mordor"})
    # Each record carries the revision its subject had (typed writes count the node's; links have none).
    expected = delete_changes(
        Subject.node("Npc", gandalf), node, change_id, at, agent, revision=node.get("_rev")
    ) + delete_changes(
        Subject.relationship("LOCATED_IN", "Npc", gandalf, "Location", mordor),
        link,
        change_id,
        at,
        agent,
        revision=link.get("_rev"),
    )
    assert len(expected) == 2  # one record for the node, one for its relationship
    assert written == each_value(expected)
    assert {"role", "status", "name", "confidence"} <= {r["property"] for r in written if r["subject"] == "node"}
    assert await graph.read(Statement("MATCH (n:Npc) RETURN n")) == []
    role = next(c for c in changes if c["property"] == "role")
    assert role["op"] == "delete" and role["before"] == "Wizard" and role["after"] is None
    assert role["before_claim"]["agent"] == agent and role["before_claim"]["source"] == "dm-notes"
    assert {c["property"] for c in changes} == {r["property"] for r in written if r["subject"] == "node"}


@pytest.fixture
async def memory(settings: Settings, matrix_graph: GraphBackend) -> AsyncIterator[Client]:
    async with open_client(settings, "in_process", profile="memory") as client:
        yield client


async def test_the_memory_profile_records_creates_observations_and_deletes(memory: Client, graph: GraphBackend) -> None:
    entities = [
        {"name": "Ada", "entityType": "person", "observations": ["likes tea"]},
        {"name": "Bob", "entityType": "Person"},
    ]
    await ok(memory, "create_entities", {"entities": entities})
    created = await history(memory, label="Person", merge_keys={"name": "Ada"})
    ada = await props(graph, "(x:Person {name: 'Ada'})")
    assert sorted((c["property"], c["op"], c["before"], c["after"]) for c in created) == [
        ("name", "set", None, "Ada"),
        ("observations", "set", None, ["likes tea"]),
    ]
    # Each value's claim is the one stored beside it.
    assert all(c["claim"] == dict(zip(VALUE_CLAIM_FIELDS, ada[f"_p_{c['property']}"], strict=True)) for c in created)
    assert {c["revision"] for c in created} == {1}

    await ok(memory, "add_observations", {"observations": [{"entityName": "Ada", "contents": ["plays chess"]}]})
    await ok(memory, "add_observations", {"observations": [{"entityName": "Ada", "contents": ["plays chess"]}]})
    await ok(memory, "delete_observations", {"deletions": [{"entityName": "Ada", "observations": ["likes tea"]}]})
    changes = await history(memory, label="Person", merge_keys={"name": "Ada"}, property="observations")
    # Newest first; the repeated add changed nothing, so it left no record.
    assert [(c["before"], c["after"], c["revision"]) for c in changes] == [
        (["likes tea", "plays chess"], ["plays chess"], 3),
        (["likes tea"], ["likes tea", "plays chess"], 2),
        (None, ["likes tea"], 1),
    ]
    assert changes[1]["before_claim"] == changes[2]["claim"]

    relation = {"from": "Ada", "to": "Bob", "relationType": "KNOWS"}
    knows = rel_ref("KNOWS", ("Person", "Ada"), ("Person", "Bob"))
    await ok(memory, "create_relations", {"relations": [relation]})
    [made] = await history(memory, **knows)
    assert (made["op"], made["property"], made["after"]) == ("set", "weight", 1.0)
    link = await props(graph, "(:Person)-[x:KNOWS]->()")
    await ok(memory, "delete_relations", {"relations": [relation]})
    gone = await history(memory, **knows)
    assert {c["property"]: c["before"] for c in gone if c["op"] == "delete"} == {
        k: v for k, v in link.items() if not k.startswith("_")
    }

    await ok(memory, "create_relations", {"relations": [relation]})
    ada, link = await props(graph, "(x:Person {name: 'Ada'})"), await props(graph, "(:Person)-[x:KNOWS]->()")
    before = await records(graph)
    await ok(memory, "delete_entities", {"entityNames": ["Ada", "Bob"]})
    bob = [r for r in before if r.get("key") == BOB]  # Bob's values, as created
    deleted = [r for r in await records(graph) if r not in before]
    change_id, at, agent = deleted[0]["change_id"], deleted[0]["at"], deleted[0]["agent"]
    knows_subject = Subject.relationship("KNOWS", "Person", ADA, "Person", BOB)
    expected = each_value(
        delete_changes(Subject.node("Person", ADA), ada, change_id, at, agent, ada.get("_rev"))
        + delete_changes(knows_subject, link, change_id, at, agent, link.get("_rev"))  # once, though both ends went
    ) + [r for r in deleted if r.get("key") == BOB]
    assert deleted == sorted(expected, key=_order)
    bob_deleted = {r["property"]: r["before"] for r in deleted if r.get("key") == BOB}
    assert bob and all(bob_deleted[r["property"]] == r["after"] for r in bob)
    assert await graph.read(Statement("MATCH (n:Person) RETURN n")) == []


async def test_merge_entities_records_what_moved_and_what_went(settings: Settings, matrix_graph: GraphBackend) -> None:
    async with open_client(settings, "in_process") as client:
        for name, extra in (("Acme", {"url": "https://acme.example"}), ("Acmee", {"founded": 1990})):
            args = {"label": "Organization", "merge_keys": {"name": name}, "properties": extra, **PROV}
            await ok(client, "write_node", args)
        for person, org, since in (("Alice", "Acme", None), ("Alice", "Acmee", 2021), ("Bob", "Acmee", 2019)):
            args = {**rel_ref("WORKS_FOR", ("Person", person), ("Organization", org)), **PROV}
            args["type"] = args.pop("label")
            args |= {"endpoint_policy": "merge_endpoints", "properties": {"since": since} if since else {}}
            await ok(client, "write_relationship", args)
        acmee = await props(matrix_graph, "(x:Organization {name: 'Acmee'})")
        bob_link = await props(matrix_graph, "(:Person {name: 'Bob'})-[x]->()")
        merge = {"survivor": node_ref("Organization", "Acme"), "merged": [node_ref("Company", "Acmee")]}
        await ok(client, "merge_entities", merge)
        survivor = await history(client, label="Organization", merge_keys={"name": "Acme"})
        bob_old = await history(client, **rel_ref("WORKS_FOR", ("Person", "Bob"), ("Organization", "Acmee")))
        bob_new = await history(client, **rel_ref("WORKS_FOR", ("Person", "Bob"), ("Organization", "Acme")))
        alice_new = await history(client, **rel_ref("WORKS_FOR", ("Person", "Alice"), ("Organization", "Acme")))
    # The merge's records, apart from those of the writes that made the nodes and relationships.
    merged_ids = {c["change_id"] for c in bob_new}  # Bob's relationship to Acme: made by the merge alone
    assert len(merged_ids) == 1
    survivor, bob_old, alice_new = (
        [c for c in cs if c["change_id"] in merged_ids] for cs in (survivor, bob_old, alice_new)
    )
    # The survivor gained Acmee's founding year, with the claim it had there.
    [founded] = survivor
    assert (founded["op"], founded["property"], founded["before"], founded["after"]) == ("set", "founded", None, 1990)
    assert founded["claim"] == dict(zip(VALUE_CLAIM_FIELDS, acmee["_p_founded"], strict=True))
    # Bob's relationship went from Acmee (every value recorded) and came to Acme with the same values.
    assert {c["property"]: c["before"] for c in bob_old} == {k: v for k, v in bob_link.items() if k[0] != "_"}
    assert all(c["op"] == "delete" for c in bob_old)
    assert {c["property"]: c["after"] for c in bob_new} == {k: v for k, v in bob_link.items() if k[0] != "_"}
    # Alice already worked for Acme: her relationship there gained only what it lacked (since).
    assert [(c["property"], c["after"]) for c in alice_new] == [("since", 2021)]
    assert len({c["change_id"] for c in survivor + bob_old}) == 1


# --- get_history: reading, filtering, paging ------------------------------------------------------------


def claim(agent: str, at: str) -> ValueProvenance:
    return ValueProvenance(agent=agent, source="s", extraction_method="manual", confidence=0.5, at=at)


async def seed_changes(graph: GraphBackend) -> None:
    """Five writes of Ada's age and one of her name, as the write path records them (core.history)."""
    subject, before = Subject.node("Person", ADA), None
    records_ = []
    for i in range(5):
        at = f"2026-01-0{i + 1}T00:00:00.000Z"
        ctx = WriteContext(f"c{i}", at, i + 1, claim(f"agent{i}", at))
        written = {"age": 30 + i} | ({"name": "Ada"} if i == 0 else {})
        records_ += set_changes(subject, before, written, ctx)
        before = {"age": 30 + i, "_p_age": [f"agent{i}", "s", "manual", 0.5, at]}
    other = Subject.node("Person", BOB)
    records_ += set_changes(other, None, {"age": 1}, WriteContext("b", "2026-01-09T00:00:00.000Z", 1, claim("x", "t")))
    text = f"UNWIND $records AS r CREATE (h:WriteGateChange) SET h += r, {numbered('h', 'r.seq')}"  # as writes do
    await graph.write(Statement(text, {"records": records_}))


async def test_get_history_pages_newest_first_and_filters(settings: Settings, matrix_graph: GraphBackend) -> None:
    await seed_changes(matrix_graph)
    ada = node_ref("Person", "Ada")
    async with open_client(settings, "in_process") as client:
        everything = await history(client, **ada)
        pages, cursor = [], None
        while True:
            answer = await ok(client, "get_history", {**ada, "limit": 2, **({"cursor": cursor} if cursor else {})})
            pages.append(answer["changes"])
            if (cursor := answer["next_cursor"]) is None:
                break
        ages = await history(client, **ada, property="age")
        since = await history(client, **ada, since="2026-01-04T00:00:00Z")
        absorbed = await history(client, label="User", merge_keys={"name": "Ada"})
        nobody = await history(client, label="Person", merge_keys={"name": "Nobody"})
        bad = await rejected(client, "get_history", {**ada, "cursor": "not-a-cursor"})
        conflicts_cursor = await rejected(client, "get_history", {**ada, "cursor": conflict_cursor()})
        neither = await rejected(client, "get_history", {"label": "Person"})
        half = await rejected(client, "get_history", {"label": "KNOWS", "from_label": "Person"})
        too_many = await rejected(client, "get_history", {**ada, "limit": 501})
    assert [c["at"][:10] for c in everything] == [
        "2026-01-05", "2026-01-04", "2026-01-03", "2026-01-02", "2026-01-01", "2026-01-01",
    ]  # fmt: skip
    assert [len(p) for p in pages] == [2, 2, 2] and [c for p in pages for c in p] == everything
    first, second = everything[3], everything[-2:]
    assert (first["before"], first["after"], first["before_claim"]["agent"], first["claim"]["agent"]) == (
        30,
        31,
        "agent0",
        "agent1",
    )
    assert {c["property"] for c in second} == {"age", "name"} and all(c["before"] is None for c in second)
    assert [c["after"] for c in ages] == [34, 33, 32, 31, 30]
    assert [c["after"] for c in since] == [34, 33]
    assert absorbed == everything  # User is absorbed into Person: the same node
    assert nobody == []
    for refusal in (bad, conflicts_cursor, neither, half, too_many):
        assert refusal["error_code"] == "INVALID_INPUT", refusal
    assert bad["details"]["field"] == "cursor"


def conflict_cursor() -> str:
    from write_gate.services.reads import encode_cursor

    return encode_cursor("conflicts", a="2026", c="x")


# --- list_conflicts -----------------------------------------------------------------------------------


async def seed_conflicts(graph: GraphBackend) -> None:
    current, incoming = claim("api", "2026-01-01T00:00:00.000Z"), claim("llm", "2026-01-02T00:00:00.000Z")
    made = []
    for i, (status_policy, prop) in enumerate(
        [
            ((ConflictPolicy.KEEP_BOTH, Outcome.OPEN), "age"),
            ((ConflictPolicy.LAST_WRITER_WINS, Outcome.OVERWRITTEN), "age"),
            ((ConflictPolicy.KEEP_BOTH, Outcome.OPEN), "email"),
        ]
    ):
        policy, outcome = status_policy
        conflict = Conflict(prop, policy, outcome, 36, current, 99 + i, incoming)
        made += conflict_records(
            Subject.node("Person", ADA), [conflict], f"w{i}", f"2026-01-0{i + 2}T00:00:00.000Z", [f"k{i}"]
        )
    rel = Subject.relationship("WORKS_FOR", "Person", ADA, "Organization", identity_key({"name": "Acme"}))
    made += conflict_records(
        rel,
        [Conflict("since", ConflictPolicy.KEEP_BOTH, Outcome.OPEN, 2020, current, 2021, incoming)],
        "w9",
        "2026-01-09T00:00:00.000Z",
        ["k9"],
    )
    resolved = {**made[0], "conflict_id": "k0r", "status": "resolved", "resolved_by": "lead", "picked": 36}
    text = f"UNWIND $records AS r CREATE (c:WriteGateConflict) SET c += r, {numbered('c', 'r.at')}"  # as writes do
    await graph.write(Statement(text, {"records": [*made, resolved]}))


async def test_list_conflicts_filters_by_status_label_and_property_and_pages(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    await seed_conflicts(matrix_graph)
    async with open_client(settings, "in_process") as client:
        open_ = (await ok(client, "list_conflicts", {}))["conflicts"]
        settled = (await ok(client, "list_conflicts", {"status": "settled"}))["conflicts"]
        resolved = (await ok(client, "list_conflicts", {"status": "resolved"}))["conflicts"]
        everything = (await ok(client, "list_conflicts", {"status": "all"}))["conflicts"]
        person_age = (await ok(client, "list_conflicts", {"label": "user", "property": "age"}))["conflicts"]
        works = (await ok(client, "list_conflicts", {"label": "EMPLOYED_BY"}))["conflicts"]
        first = await ok(client, "list_conflicts", {"status": "all", "limit": 3})
        rest = await ok(client, "list_conflicts", {"status": "all", "limit": 3, "cursor": first["next_cursor"]})
        bad = await rejected(client, "list_conflicts", {"cursor": "eyJrIjogImhpc3RvcnkifQ"})
        wrong_status = await rejected(client, "list_conflicts", {"status": "pending"})
    assert [c["conflict_id"] for c in open_] == ["k9", "k2", "k0"]
    assert [c["conflict_id"] for c in settled] == ["k1"] and settled[0]["outcome"] == "overwritten"
    assert [(c["resolved_by"], c["picked"]) for c in resolved] == [("lead", 36)]
    assert len(everything) == 5
    assert [c["conflict_id"] for c in person_age] == ["k0"]  # open only, by default
    [since] = works
    assert since["subject"] == {
        "type": "WORKS_FOR",
        "from_label": "Person",
        "from_keys": {"name": "Ada"},
        "to_label": "Organization",
        "to_keys": {"name": "Acme"},
    }
    age = open_[-1]
    assert age["subject"] == {"label": "Person", "merge_keys": {"name": "Ada"}}
    assert (age["current_value"], age["incoming_value"], age["policy"]) == (36, 99, "keep_both")
    assert (age["current_claim"]["agent"], age["incoming_claim"]["agent"]) == ("api", "llm")
    assert [len(first["conflicts"]), len(rest["conflicts"]), rest["next_cursor"]] == [3, 2, None]
    assert first["conflicts"] + rest["conflicts"] == everything
    assert bad["error_code"] == "INVALID_INPUT" and wrong_status["error_code"] == "INVALID_INPUT"


@pytest.mark.one_tier
async def test_the_history_tools_answer_in_the_memory_profile_over_stdio(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    await seed_changes(matrix_graph)
    await seed_conflicts(matrix_graph)
    listed = settings.model_copy(update={"toolsets": "history"})  # WRITE_GATE_TOOLSETS over stdio
    async with open_client(listed, "stdio", profile="memory") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        changes = await history(client, label="Person", merge_keys={"name": "Ada"}, limit=1)
        conflicts = (await ok(client, "list_conflicts", {"property": "email"}))["conflicts"]
    assert tools["get_history"].annotations.read_only_hint and tools["list_conflicts"].annotations.read_only_hint
    assert [c["after"] for c in changes] == [34]
    assert [c["conflict_id"] for c in conflicts] == ["k2"]

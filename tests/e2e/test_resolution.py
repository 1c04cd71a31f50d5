"""Entity resolution through a real MCP client on every engine: find_duplicates scores and explains, merge_entities
re-points, unions and reports, and aliases lead writes and reads to the survivor."""

import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.conftest import MATRIX_SCHEMAS, ok, open_client, rejected
from write_gate.access.agents import AgentsFile, Grant
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.bundled import bundled
from write_gate.store.schema_files import load_into_graph, read_sources
from write_gate.surface.server import build_server

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

RPG = bundled("schemas") / "examples" / "rpg"
PROV = {"source": "crm", "extraction_method": "manual", "reliability": 0.8}


@pytest.fixture
async def client(settings: Settings, matrix_graph: GraphBackend) -> AsyncIterator[Client]:
    async with open_client(settings, "in_process") as client:
        yield client


async def node(client: Client, label: str, name: str, **properties: Any) -> None:
    await ok(client, "write_node", {"label": label, "merge_keys": {"name": name}, "properties": properties, **PROV})


async def rel(client: Client, type_: str, start: tuple[str, str], end: tuple[str, str], **properties: Any) -> None:
    args = {"type": type_, "from_label": start[0], "from_keys": {"name": start[1]}}
    args |= {"to_label": end[0], "to_keys": {"name": end[1]}, "properties": properties, **PROV}
    await ok(client, "write_relationship", args)


def ref(label: str, name: str) -> dict[str, Any]:
    return {"label": label, "merge_keys": {"name": name}}


async def edges(graph: GraphBackend) -> list[tuple[str, str, str]]:
    rows = await graph.read(
        Statement("MATCH (a)-[r]->(b) RETURN a.name AS a, type(r) AS t, b.name AS b ORDER BY a, t, b")
    )
    return [(r["a"], r["t"], r["b"]) for r in rows]


async def props(graph: GraphBackend, label: str, name: str) -> dict[str, Any]:
    rows = await graph.read(
        Statement(f"MATCH (n:{label}) WHERE n.name = $name RETURN properties(n) AS p", {"name": name})
    )
    assert len(rows) == 1
    return rows[0]["p"]


# --- find_duplicates ---------------------------------------------------------------------------


async def test_duplicates_are_scored_explained_and_ordered(client: Client) -> None:
    await node(client, "Organization", "Acme")
    await node(client, "Organization", "Acmee")
    await node(client, "Organization", "Globex")
    await node(client, "Person", "Jo Smith", email="jo@example.org")
    await node(client, "Person", "Joanna Smith-Jones", email="JO@example.org ")
    await node(client, "Person", "Al")
    await node(client, "Entity", "al")
    found = await ok(client, "find_duplicates", {})
    pairs = [([n["name"] for n in p["nodes"]], p["score"], p["signals"]) for p in found["pairs"]]
    assert pairs == [
        (
            ["Jo Smith", "Joanna Smith-Jones"],
            1.0,
            [{"signal": "name_similarity", "score": 0.6154}, {"signal": "shared_email", "score": 1.0}],
        ),
        (["Acme", "Acmee"], 0.8889, [{"signal": "name_similarity", "score": 0.8889}]),
    ]
    assert found["pairs"][1]["nodes"][0] == {"label": "Organization", "merge_keys": {"name": "Acme"}, "name": "Acme"}
    assert found["nodes_scanned"] == 7 and found["more"] is False
    assert found["groups"] == [["Jo Smith", "Joanna Smith-Jones"], ["Acme", "Acmee"]]  # memory-mcp's string[][]
    across = await ok(client, "find_duplicates", {"across_labels": True, "threshold": 0.95, "limit": 1})
    assert [(n["label"], n["name"]) for n in across["pairs"][0]["nodes"]] == [("Entity", "al"), ("Person", "Al")]
    assert across["pairs"][0]["signals"][0] == {"signal": "same_name", "score": 1.0}
    assert across["more"] is True  # the email pair passes 0.95 too
    only = await ok(client, "find_duplicates", {"labels": ["Organization"], "threshold": 0.9})
    assert only["pairs"] == [] and only["groups"] == [] and only["nodes_scanned"] == 3


async def test_archived_entities_are_not_paired_until_restored(client: Client) -> None:
    """find_duplicates is a read: like the others it skips what the archive holds."""
    await node(client, "Organization", "Acme")
    await node(client, "Organization", "Acmee")
    await ok(client, "add_tags", {"entityName": "Acmee", "tags": ["old"]})
    assert (await ok(client, "archive_entities", {"tags": ["old"]}))["archived"] == 1
    found = await ok(client, "find_duplicates", {})
    assert found["pairs"] == [] and found["nodes_scanned"] == 1
    await ok(client, "restore_entities", {"entityNames": ["Acmee"]})
    found = await ok(client, "find_duplicates", {})
    assert [[n["name"] for n in pair["nodes"]] for pair in found["pairs"]] == [["Acme", "Acmee"]]


def _names(rng: random.Random, count: int) -> list[str]:
    """Names from a few syllables, some with a letter dropped or doubled: pairs near and far, blocks small."""
    syllables = ["ac", "me", "glo", "bex", "ini", "ra", "zen"]
    out: set[str] = set()
    while len(out) < count:
        name = "".join(rng.choice(syllables) for _ in range(rng.randint(2, 3))).capitalize()
        if out and rng.random() < 0.3:
            base = rng.choice(sorted(out))
            i = rng.randrange(1, len(base))
            name = base[:i] + base[i:][1:] if rng.random() < 0.5 else base[:i] + base[i] + base[i:]
        out.add(name)
    return sorted(out)


def _pairs(answer: dict[str, Any]) -> list[tuple[tuple[str, str], ...]]:
    return [tuple((n["label"], n["name"]) for n in pair["nodes"]) for pair in answer["pairs"]]


def _walk_calls(counts: list[int], size: int, across_labels: bool) -> int:
    """The calls of a walk over labels holding `counts` nodes (in order), windows of `size`: each window against
    itself, then against each later window, those past the window's last label left out unless `across_labels`."""
    label_of = [index for index, count in enumerate(counts) for _ in range(count)]
    starts = range(0, len(label_of), size)
    last = [label_of[min(start + size, len(label_of)) - 1] for start in starts]
    paired = [[across_labels or label_of[later] <= last[i] for later in starts[i + 1 :]] for i in range(len(starts))]
    return sum(1 + sum(later) for later in paired)


async def _walk(client: Client, args: dict[str, Any]) -> list[dict[str, Any]]:
    calls, cursor = [], None
    while True:
        call = await ok(client, "find_duplicates", {**args, "cursor": cursor})
        assert 0 < call["nodes_scanned"] <= 2 * args["page_size"], (args, call)
        assert call["more"] is False, (args, call)
        calls.append(call)
        if (cursor := call["next_cursor"]) is None:
            return calls


async def test_a_walk_pairs_every_window_with_itself_and_every_later_one(client: Client) -> None:
    """A call reads at most two windows of `page_size` nodes (consecutive pages of the nodes, label after label in
    page order) and answers the pairs with a node in each (in one window: within it); `next_cursor` leads through
    every window against itself and every later one, so a walk answers exactly what one pass over every node
    answers, each pair once (names whose blocks stay small, so no block is walked as a sorted neighbourhood)."""
    rng = random.Random(37)
    counts = []
    for label in ("Organization", "Person"):
        items = [{"label": label, "merge_keys": {"name": name}, **PROV} for name in _names(rng, rng.randint(20, 30))]
        assert (await ok(client, "write_nodes", {"items": items}))["written"] == len(items)
        counts.append(len(items))
    written = sum(counts)
    for across_labels, sizes in ((False, (2, 7, written - 1, written)), (True, (7,))):
        args: dict[str, Any] = {"labels": ["Organization", "Person"], "threshold": 0.7, "limit": 500}
        args["across_labels"] = across_labels
        whole = await ok(client, "find_duplicates", args)
        assert whole["nodes_scanned"] == written and whole["next_cursor"] is None and whole["more"] is False
        assert len(_pairs(whole)) >= 5  # the check can fail
        if across_labels:
            assert any(a[0] != b[0] for a, b in _pairs(whole))
        for size in sizes:
            calls = await _walk(client, {**args, "page_size": size})
            found = [pair for call in calls for pair in _pairs(call)]
            assert sorted(found) == sorted(_pairs(whole)), size  # every pair, and each once
            assert len(calls) == _walk_calls(counts, size, across_labels), size
            if size == written:
                assert calls == [whole]


async def test_a_node_gone_during_a_walk_stretches_a_window_but_is_never_paired_with_itself(client: Client) -> None:
    """Windows W0 = (Acme, Acmee), W1 = (Acmeee, Acmeeee) in either page order; with Acmee archived before the call
    (W0, W1), W0 now reaches Acmeee, which W1 also holds: it is paired once, never with itself."""
    for name in ("Acme", "Acmee", "Acmeee", "Acmeeee"):
        await node(client, "Organization", name)
    args: dict[str, Any] = {"labels": ["Organization"], "page_size": 2, "threshold": 0.5, "limit": 500}
    first = await ok(client, "find_duplicates", args)
    assert _pairs(first) == [(("Organization", "Acme"), ("Organization", "Acmee"))]
    await ok(client, "add_tags", {"entityName": "Acmee", "tags": ["old"]})
    assert (await ok(client, "archive_entities", {"tags": ["old"]}))["archived"] == 1
    second = await ok(client, "find_duplicates", {**args, "cursor": first["next_cursor"]})
    assert second["nodes_scanned"] == 3
    assert sorted(b[1] for a, b in _pairs(second)) == ["Acmeeee"] * 2  # Acme and Acmeee against Acmeeee
    assert all(a != b for a, b in _pairs(second))


async def test_a_bad_cursor_is_refused(client: Client) -> None:
    await node(client, "Organization", "Acme")
    await node(client, "Organization", "Acmee")
    first = await ok(client, "find_duplicates", {"labels": ["Organization"], "page_size": 1})
    assert first["next_cursor"] is not None
    listed = await ok(client, "read_graph", {"limit": 1})
    for cursor in ("nope", listed["next_cursor"], first["next_cursor"] + "x"):
        bad = await rejected(client, "find_duplicates", {"labels": ["Organization"], "cursor": cursor})
        assert bad["error_code"] == "INVALID_INPUT", cursor
    # A cursor into a label this call does not ask for.
    bad = await rejected(client, "find_duplicates", {"labels": ["Person"], "cursor": first["next_cursor"]})
    assert bad["error_code"] == "INVALID_INPUT"
    # A walk goes on with the windows it started with: the same page_size and across_labels.
    for changed in ({"page_size": 2}, {"page_size": 1, "across_labels": True}):
        bad = await rejected(
            client, "find_duplicates", {"labels": ["Organization"], "cursor": first["next_cursor"], **changed}
        )
        assert bad["error_code"] == "INVALID_INPUT", changed
    args = {"labels": ["Organization"], "page_size": 1, "cursor": first["next_cursor"]}
    second = await ok(client, "find_duplicates", args)
    assert second["nodes_scanned"] == 2 and len(second["pairs"]) == 1  # Acme against Acmee
    for size in (0, 10_001):
        bad = await rejected(client, "find_duplicates", {"page_size": size})
        assert bad["error_code"] == "INVALID_INPUT"


# --- merge_entities ----------------------------------------------------------------------------


async def alicia_and_alice(client: Client) -> None:
    await node(client, "Person", "Alice", age=30)
    await node(client, "Person", "Alicia", age=31, email="alice@example.org")
    for name in ("Bob", "Carol"):
        await node(client, "Person", name)
    await node(client, "Organization", "Acme")
    await rel(client, "KNOWS", ("Person", "Alice"), ("Person", "Bob"), since=2020)
    await rel(client, "KNOWS", ("Person", "Alicia"), ("Person", "Bob"), since=2019, met="work")  # a repeat
    await rel(client, "KNOWS", ("Person", "Carol"), ("Person", "Alicia"))  # incoming
    await rel(client, "WORKS_FOR", ("Person", "Alicia"), ("Organization", "Acme"))  # outgoing
    await rel(client, "KNOWS", ("Person", "Alicia"), ("Person", "Alice"))  # between the two


async def test_merge_repoints_unions_and_reports_conflicts(client: Client, graph: GraphBackend) -> None:
    await alicia_and_alice(client)
    merged = await ok(
        client, "merge_entities", {"survivor": ref("Person", "Alice"), "merged": [ref("Person", "Alicia")]}
    )
    assert merged["survivor"] == ref("Person", "Alice")
    assert merged["merged"] == [
        {
            "label": "Person",
            "merge_keys": {"name": "Alicia"},
            "properties_copied": ["email"],
            "properties_combined": [],
            "relationships_moved": 2,
            "relationships_merged": 1,
            "relationships_dropped": [{"type": "KNOWS", "direction": "out"}],
        }
    ]
    conflicts = {
        (c["property"], c["relationship"]): (c["survivor_value"], c["merged_value"]) for c in merged["conflicts"]
    }
    assert conflicts == {
        ("age", None): (30, 31),
        ("name", None): ("Alice", "Alicia"),
        ("since", "KNOWS:out"): (2020, 2019),
    }
    assert await edges(graph) == [
        ("Alice", "KNOWS", "Bob"),
        ("Alice", "WORKS_FOR", "Acme"),
        ("Carol", "KNOWS", "Alice"),
    ]
    knows = await graph.read(
        Statement("MATCH (:Person {name: 'Alice'})-[r:KNOWS]->(:Person {name: 'Bob'}) RETURN properties(r) AS p")
    )
    assert (knows[0]["p"]["since"], knows[0]["p"]["met"]) == (2020, "work")
    alice, alicia = await props(graph, "Person", "Alice"), await props(graph, "Person", "Alicia")
    assert (alice["age"], alice["email"]) == (30, "alice@example.org")
    assert alicia["age"] == 31 and alicia["_alias_of"] == '{"name":"Alice"}'  # the conflict stays on the alias
    again = await rejected(
        client, "merge_entities", {"survivor": ref("Person", "Bob"), "merged": [ref("Person", "Alicia")]}
    )
    assert (again["error_code"], again["details"]["reason"]) == ("INVALID_INPUT", "already_merged")


async def test_writes_and_reads_through_an_alias_reach_the_survivor(client: Client, graph: GraphBackend) -> None:
    await alicia_and_alice(client)
    await ok(client, "merge_entities", {"survivor": ref("Person", "Alice"), "merged": [ref("Person", "Alicia")]})
    written = await ok(
        client,
        "write_node",
        {"label": "person", "merge_keys": {"name": "Alicia"}, "properties": {"name": "Alicia", "age": 40}, **PROV},
    )
    assert (written["label"], written["merge_keys"]) == ("Person", {"name": "Alice"})
    assert written["remapped_from"] == ":person"  # the remap is answered past the alias too (a black-box audit)
    assert (await props(graph, "Person", "Alice"))["age"] == 40
    await rel(client, "KNOWS", ("Person", "Alicia"), ("Person", "Carol"))
    await ok(
        client,
        "write_relationship",
        {"type": "KNOWS", "from_label": "Person", "from_keys": {"name": "Dave"}, "to_label": "Person",
         "to_keys": {"name": "Alicia"}, "endpoint_policy": "merge_endpoints", **PROV},
    )  # fmt: skip
    assert ("Alice", "KNOWS", "Carol") in await edges(graph) and ("Dave", "KNOWS", "Alice") in await edges(graph)
    assert len(await graph.read(Statement("MATCH (n {name: 'Alicia'})-[r]-() RETURN r"))) == 0
    alone = {"neighbors": False}  # the survivor, its neighbours (Carol, Dave) aside
    opened = await ok(client, "open_nodes", {"names": ["Alicia"], **alone})
    assert [e["name"] for e in opened["entities"]] == ["Alice"]
    searched = await ok(client, "search_nodes", {"query": "alicia", **alone})
    assert [e["name"] for e in searched["entities"]] == ["Alice"]
    everything = await ok(client, "read_graph", {})
    assert "Alicia" not in [e["name"] for e in everything["entities"]]


async def test_chained_merges_lead_to_the_last_survivor(client: Client, graph: GraphBackend) -> None:
    for name in ("Al", "Alan", "Alan Turing"):
        await node(client, "Person", name)
    await ok(client, "merge_entities", {"survivor": ref("Person", "Alan"), "merged": [ref("Person", "Al")]})
    # Across labels too: Alan's whole identity now leads to an Entity.
    await node(client, "Entity", "A. M. Turing")
    await ok(client, "merge_entities", {"survivor": ref("Entity", "A. M. Turing"), "merged": [ref("Person", "Alan")]})
    written = await ok(
        client, "write_node", {"label": "Person", "merge_keys": {"name": "Al"}, "properties": {"x": 1}, **PROV}
    )
    assert (written["label"], written["merge_keys"]) == ("Entity", {"name": "A. M. Turing"})
    assert (await props(graph, "Entity", "A. M. Turing"))["x"] == 1
    assert [e["name"] for e in (await ok(client, "open_nodes", {"names": ["Al"]}))["entities"]] == ["A. M. Turing"]


async def test_an_alias_leads_to_a_survivor_whose_identity_is_hashed(client: Client, graph: GraphBackend) -> None:
    """A name past 1,024 characters is stored as a digest in `_key`, which cannot be read back: the survivor's
    keys come from its properties, as its entry names them."""
    long = "Alice " + "of the very long name " * 60
    for name in (long, "Ally"):
        await node(client, "Person", name)
    await ok(client, "merge_entities", {"survivor": ref("Person", long), "merged": [ref("Person", "Ally")]})
    written = await ok(
        client, "write_node", {"label": "Person", "merge_keys": {"name": "Ally"}, "properties": {"age": 41}, **PROV}
    )
    assert written["merge_keys"] == {"name": long}
    assert (await props(graph, "Person", long))["age"] == 41
    assert [e["name"] for e in (await ok(client, "open_nodes", {"names": ["Ally"]}))["entities"]] == [long]


async def test_concurrent_merges_and_writes_lose_nothing(client: Client, graph: GraphBackend) -> None:
    await alicia_and_alice(client)
    outcomes: list[dict[str, Any]] = []

    async def merge(survivor: str) -> None:
        result = await client.call_tool(
            "merge_entities", {"survivor": ref("Person", survivor), "merged": [ref("Person", "Alicia")]}
        )
        outcomes.append(result.structured_content)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(merge, "Alice")
        tasks.start_soon(merge, "Bob")
        tasks.start_soon(rel, client, "KNOWS", ("Person", "Alicia"), ("Person", "Carol"))
        tasks.start_soon(lambda: node(client, "Person", "Alicia", hobby="chess"))
    statuses = sorted(o["details"]["reason"] if o["status"] == "rejected" else o["status"] for o in outcomes)
    assert statuses == ["already_merged", "merged"]
    winner = next(o["survivor"]["merge_keys"]["name"] for o in outcomes if o.get("status") == "merged")
    # Whatever the order: Alicia holds no relationship, and the one written to her reached the winner.
    assert len(await graph.read(Statement("MATCH (n {name: 'Alicia'})-[r]-() RETURN r"))) == 0
    assert (winner, "KNOWS", "Carol") in await edges(graph)
    # The hobby is on the winner (written through the alias or copied by the merge), or on the alias if the
    # write came first and the winner already had one: never lost.
    hobbies = {name: (await props(graph, "Person", name)).get("hobby") for name in (winner, "Alicia")}
    assert "chess" in hobbies.values()


async def test_a_grant_refuses_a_merge_touching_a_label_it_may_not_write(
    settings: Settings, matrix_graph: GraphBackend, tmp_path: Path
) -> None:
    agents = AgentsFile.load(tmp_path / "agents.toml")
    agents.add("people", Grant(labels=("Person",), relationship_types=("KNOWS",)))
    agents.save()
    async with open_client(settings, "in_process") as admin:
        await alicia_and_alice(admin)
        await node(admin, "Organization", "Acmee")
    server = build_server(
        settings.model_copy(update={"agents_file": tmp_path / "agents.toml", "agent": "people"}), auto_migrate=False
    )
    async with Client(server) as client:
        denied = await rejected(
            client,
            "merge_entities",
            {"survivor": ref("Organization", "Acme"), "merged": [ref("Organization", "Acmee")]},
        )
        assert (denied["error_code"], denied["details"]["labels"]) == ("PERMISSION_DENIED", ["Organization"])
        # Alicia works for Acme: moving WORKS_FOR needs that type too.
        denied = await rejected(
            client, "merge_entities", {"survivor": ref("Person", "Alice"), "merged": [ref("Person", "Alicia")]}
        )
        assert denied["details"]["relationship_types"] == ["WORKS_FOR"]
    assert (await props(matrix_graph, "Person", "Alicia")).get("_alias_of") is None


async def test_bad_merges_get_structured_rejections(client: Client) -> None:
    await node(client, "Person", "Alice")
    cases = [
        ({"survivor": ref("Person", "Nobody"), "merged": [ref("Person", "Alice")]},
         "ENDPOINT_NOT_FOUND", ["survivor"]),
        ({"survivor": ref("Person", "Alice"), "merged": [ref("Person", "Nobody")]},
         "ENDPOINT_NOT_FOUND", ["merged[0]"]),
        ({"survivor": ref("Person", "Alice"), "merged": [ref("Person", "Alice")]}, "INVALID_INPUT", None),
        ({"survivor": ref("Person", "Nobody"), "merged": [ref("Person", "Al"), ref("person", "Al")]},
         "INVALID_INPUT", None),
        ({"survivor": ref("Planet", "Alice"), "merged": [ref("Person", "Alice")]}, "SCHEMA_UNKNOWN_LABEL", None),
        ({"survivor": ref("Person", "Alice"), "merged": []}, "INVALID_INPUT", None),
        ({"survivor": {"label": "Person", "merge_keys": {"nom": "Alice"}}, "merged": [ref("Person", "Alice")]},
         "SCHEMA_MISSING_REQUIRED_PROPERTY", None),
    ]  # fmt: skip
    for args, code, missing in cases:
        answer = await rejected(client, "merge_entities", args)
        assert answer["error_code"] == code, args
        if missing is not None:
            assert answer["details"]["missing"] == missing
    bad = await rejected(client, "find_duplicates", {"threshold": 1.5})
    assert bad["error_code"] == "INVALID_INPUT"
    bad = await rejected(client, "find_duplicates", {"shared_properties": ["e-mail"]})
    assert bad["error_code"] == "INVALID_INPUT"


@pytest.mark.one_tier
async def test_aliases_hold_across_gates_batches_and_the_memory_profile(
    client: Client, settings: Settings, graph: GraphBackend
) -> None:
    await alicia_and_alice(client)
    await ok(client, "merge_entities", {"survivor": ref("Person", "Alice"), "merged": [ref("Person", "Alicia")]})
    # Another gate process on the same graph (stdio: its own `write-gate serve`), in batches.
    async with open_client(settings, "stdio") as other:
        nodes = await ok(
            other,
            "write_nodes",
            {"items": [{"label": "Person", "merge_keys": {"name": n}, "properties": {"team": "red"}, **PROV}
                       for n in ("Alicia", "Zed")]},
        )  # fmt: skip
        assert [(i["status"], i["merge_keys"]) for i in nodes["items"]] == [
            ("written", {"name": "Alice"}),
            ("written", {"name": "Zed"}),
        ]
        items = [
            {"type": "KNOWS", "from_label": "Person", "from_keys": {"name": a}, "to_label": "Person",
             "to_keys": {"name": b}, **PROV}
            for a, b in (("Zed", "Alicia"), ("Zed", "Nobody"))
        ]  # fmt: skip
        rels = await ok(other, "write_relationships", {"items": items})
        assert [i["status"] for i in rels["items"]] == ["written", "rejected"]
        assert rels["items"][1]["error_code"] == "ENDPOINT_NOT_FOUND"
    assert (await props(graph, "Person", "Alice"))["team"] == "red"
    assert ("Zed", "KNOWS", "Alice") in await edges(graph)
    # The memory profile addresses entities by name: an alias's name reaches the survivor.
    async with open_client(settings, "in_process", profile="memory") as memory:
        added = await ok(memory, "add_observations", {"observations": [{"entityName": "Alicia", "contents": ["tall"]}]})
        assert added["results"] == [{"entityName": "Alicia", "addedObservations": ["tall"]}]
        await ok(memory, "create_relations", {"relations": [{"from": "Alicia", "to": "Zed", "relationType": "KNOWS"}]})
    assert (await props(graph, "Person", "Alice"))["observations"] == ["tall"]
    assert ("Alice", "KNOWS", "Zed") in await edges(graph)
    assert len(await graph.read(Statement("MATCH (n {name: 'Alicia'})-[r]-() RETURN r"))) == 0


async def test_typed_tools_write_through_aliases(settings: Settings, graph: GraphBackend) -> None:
    await load_into_graph(graph, read_sources([RPG, MATRIX_SCHEMAS]))
    async with open_client(settings, "in_process") as rpg:
        for place in ("Rivendell", "Imladris"):
            await ok(rpg, "add_location", {"location": {"name": place}, **PROV})
        for name in ("Gandalf", "Mithrandir"):
            await ok(rpg, "add_npc", {"npc": {"name": name, "role": "Wizard", "status": "Active"}, **PROV})
        for survivor, merged in (("Rivendell", "Imladris"), ("Gandalf", "Mithrandir")):
            label = "Location" if survivor == "Rivendell" else "Npc"
            await ok(rpg, "merge_entities", {"survivor": ref(label, survivor), "merged": [ref(label, merged)]})
        # Both the node and the target named by their alias.
        updated = await ok(rpg, "update_npc", {"npc": {"name": "Mithrandir", "status": "Deceased",
                                                       "currentLocation": "Imladris"}, **PROV})  # fmt: skip
        assert updated["merge_keys"] == {"name": "Gandalf"}
        assert updated["relationships"][0]["to"] == "Rivendell"
        await node(rpg, "Entity", "Olorin")
        await ok(rpg, "merge_entities", {"survivor": ref("Entity", "Olorin"), "merged": [ref("Npc", "Gandalf")]})
        refused = await rejected(rpg, "update_npc", {"npc": {"name": "Mithrandir", "status": "Active"}, **PROV})
        assert (refused["details"]["reason"], refused["details"]["label"]) == ("merged_into_other_label", "Entity")
    assert (await props(graph, "Npc", "Gandalf"))["status"] == "Deceased"
    assert await edges(graph) == [("Olorin", "LOCATED_IN", "Rivendell")]  # moved by the second merge


async def test_an_alias_whose_survivor_was_deleted_refuses_writes_and_names_nothing_to_reads(
    client: Client, settings: Settings
) -> None:
    await alicia_and_alice(client)
    await ok(client, "merge_entities", {"survivor": ref("Person", "Alice"), "merged": [ref("Person", "Alicia")]})
    async with open_client(settings, "in_process", profile="memory") as memory:
        await ok(memory, "delete_entities", {"entityNames": ["Alice"]})
        refused = await rejected(client, "write_node", {"label": "Person", "merge_keys": {"name": "Alicia"}, **PROV})
        assert (refused["error_code"], refused["details"]["reason"]) == ("INVALID_INPUT", "survivor_deleted")
        tagged = await rejected(client, "add_tags", {"entityName": "Alicia", "tags": ["x"]})  # a write by name too
        assert (tagged["error_code"], tagged["details"]["reason"]) == ("INVALID_INPUT", "survivor_deleted")
        # A read: the name leads to no entity now, and the others asked for are answered (it was refused whole,
        # "nothing was written").
        for reader in (client, memory):
            opened = await ok(reader, "open_nodes", {"names": ["Alicia", "Carol"]})
            assert [e["name"] for e in opened["entities"]] == ["Carol"]

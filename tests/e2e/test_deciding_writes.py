"""Writes that decide inside their own statement (issue 28, item 1; core/cypher/deciding_writes.py), on every engine:
a write that meets no other writer's value is one statement, its record included, and a batch reads nothing first;
the statement judges "unchanged" as the gate does (the same type and value: 1 and 1.0 differ); a write that meets
another writer's value is decided under the policies, as before. And a relationship's weight is a value like any
other (issue 26, item 3): when it starts or is averaged, get_history and changes_since show the change."""

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp import Client

from tests.conftest import MATRIX_SCHEMAS, ok
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources
from write_gate.surface.server import build_server

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

API = {"source": "api", "extraction_method": "api"}


def person(name: str, properties: dict[str, Any], prov: dict[str, Any] = API) -> dict[str, Any]:
    return {"label": "Person", "merge_keys": {"name": name}, "properties": properties, **prov}


def knows(weight: float | None, **properties: Any) -> dict[str, Any]:
    return {
        "type": "KNOWS",
        "from_label": "Person",
        "from_keys": {"name": "Ada"},
        "to_label": "Person",
        "to_keys": {"name": "Bob"},
        "properties": properties,
        "endpoint_policy": "merge_endpoints",
        **({"weight": weight} if weight is not None else {}),
        **API,
    }


KNOWS_REF = {
    "label": "KNOWS",
    "from_label": "Person",
    "from_keys": {"name": "Ada"},
    "to_label": "Person",
    "to_keys": {"name": "Bob"},
}


class Sent:
    """The statements a served gate sends to its engine (each still runs), by kind."""

    def __init__(self, backend: Any) -> None:
        self.reads = self.writes = 0
        backend.read = self._counting(backend.read, "reads")
        backend.write = self._counting(backend.write, "writes")

    def _counting(self, send: Callable[..., Any], kind: str) -> Callable[..., Any]:
        async def counted(statement: Any) -> Any:
            setattr(self, kind, getattr(self, kind) + 1)
            return await send(statement)

        return counted

    def since(self, before: tuple[int, int]) -> tuple[int, int]:
        return self.reads - before[0], self.writes - before[1]

    @property
    def now(self) -> tuple[int, int]:
        return self.reads, self.writes


@asynccontextmanager
async def served(settings: Settings, agent: str) -> AsyncIterator[tuple[Client, Sent]]:
    # The feed answers every change at once (no settling time: these tests write, then read); the registry's and
    # the feed's polls wait an hour, so that the statements counted are the calls' own.
    update = {"agent": agent, "change_settle_seconds": 0.0, "registry_poll_seconds": 3600, "change_poll_seconds": 3600}
    server = build_server(settings.model_copy(update=update), auto_migrate=False)
    async with Client(server) as client:
        yield client, Sent(server.services.gate.backend)  # type: ignore[attr-defined]


@pytest.fixture
async def gates(settings: Settings, graph: GraphBackend) -> AsyncIterator[tuple[Client, Sent, Client]]:
    """Two agents' gates on one graph: `api-bot` (counted) and `llm-bot`."""
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS]))
    async with served(settings, "api-bot") as (api, sent), served(settings, "llm-bot") as (llm, _):
        yield api, sent, llm


async def history(client: Client, **subject: Any) -> list[dict[str, Any]]:
    return (await ok(client, "get_history", {**subject, "limit": 100}))["changes"]


async def test_a_write_that_meets_no_other_writers_value_is_one_statement(gates) -> None:
    api, sent, llm = gates
    before = sent.now
    await ok(api, "write_node", person("Ada", {"age": 36}))  # new
    await ok(api, "write_node", person("Ada", {"age": 37, "city": "Oslo"}))  # the same writer's own value
    await ok(api, "write_node", person("Ada", {"age": 37}))  # unchanged
    assert sent.since(before) == (0, 3)
    # Another writer's value: the statement refuses to decide it, the gate decides and writes it guarded.
    other = await ok(llm, "write_node", person("Ada", {"age": 99}, {"source": "llm", "extraction_method": "llm"}))
    assert [c["outcome"] for c in other["conflicts"]] == ["overwritten"]
    ages = [
        (c["before"], c["after"])
        for c in await history(api, label="Person", merge_keys={"name": "Ada"}, property="age")
    ]
    assert ages == [(37, 99), (36, 37), (None, 36)]  # newest first; the unchanged write left no record

    before = sent.now
    items = [person(f"P{i}", {"n": i}) for i in range(5)] + [person("Ada", {"age": 100})]
    answer = await ok(api, "write_nodes", {"items": items})
    # One statement wrote every new node; Ada's age is llm-bot's now, so she was decided and written on her own.
    assert answer["written"] == 6 and [i.get("conflicts") is not None for i in answer["items"]] == [False] * 5 + [True]
    reads, writes = sent.since(before)
    assert (reads, writes) == (0, 3)  # the batch, then Ada's deciding statement and her guarded write


# Pairs of values (stored, then written) and whether the gate holds them the same: the same type and value.
PAIRS = [
    (1, 1, True),
    (1, 1.0, False),
    (1.0, 1, False),
    (1.5, 1.5, True),
    (0.1234567, 0.1234568, False),  # alike to six decimals: FalkorDB's text of a float
    ("1", 1, False),
    (True, 1, False),
    (True, True, True),
    ("x", "x", True),
    ([1, 2], [1, 2], True),
    ([1, 2], [1.0, 2], True),  # lists compare item by item, in Python as in Cypher
    ([1.5, 2], [1.5, 2], True),
    (["a"], ["a"], True),
    (["a"], "a", False),
    ([], [], True),
]


async def test_unchanged_is_the_same_type_and_value_for_the_record_and_for_a_conflict(gates) -> None:
    """Each pair on properties of their own: the writer writing its own value again leaves a record unless it is the
    same; another writer meets a conflict unless it is the same."""
    api, _, llm = gates
    llm_prov = {"source": "llm", "extraction_method": "llm"}
    for i, (stored, written, same) in enumerate(PAIRS):
        await ok(api, "write_node", person("Ada", {f"own{i}": stored, f"other{i}": stored}))
        again = await ok(api, "write_node", person("Ada", {f"own{i}": written}))
        records = await history(api, label="Person", merge_keys={"name": "Ada"}, property=f"own{i}")
        assert "conflicts" not in again and len(records) == (1 if same else 2), (stored, written, records)
        other = await ok(llm, "write_node", person("Ada", {f"other{i}": written}, llm_prov))
        assert ("conflicts" in other) == (not same), (stored, written, other)


async def test_a_weight_that_starts_or_is_averaged_is_recorded_and_fed(gates) -> None:
    api, _, llm = gates
    feed = (await ok(api, "changes_since", {"limit": 500}))["next_cursor"]
    await ok(api, "write_relationship", knows(None))  # starts at 1.0
    averaged = await ok(api, "write_relationship", knows(0.2))
    assert averaged["weight"] == pytest.approx(0.6)
    await ok(api, "write_relationship", knows(None, since=2020))  # no weight given: it stays
    # Through the batch, and through the guarded path (it meets llm-bot's value of `since`).
    await ok(llm, "write_relationship", {**knows(None, since=2021), "source": "llm"})
    batched = await ok(api, "write_relationships", {"items": [knows(1.0)]})
    assert batched["items"][0]["weight"] == pytest.approx(0.8)
    guarded = await ok(api, "write_relationship", knows(0.0, since=2022))
    assert guarded["weight"] == pytest.approx(0.4) and guarded["conflicts"]
    weights = [(c["before"], c["after"]) for c in await history(api, **KNOWS_REF, property="weight")]
    assert weights == [
        (pytest.approx(0.8), pytest.approx(0.4)),
        (pytest.approx(0.6), pytest.approx(0.8)),
        (1.0, pytest.approx(0.6)),
        (None, 1.0),
    ]
    fed = (await ok(llm, "changes_since", {"cursor": feed, "limit": 500, "labels": ["KNOWS"]}))["changes"]
    fed_weights = [(p["before"], p["after"]) for c in fed for p in c["properties"] if p["property"] == "weight"]
    assert fed_weights == list(reversed(weights))


async def test_an_import_writes_a_chunk_of_records_in_one_statement(gates) -> None:
    """import_graph through the batch path (issue 28, item 4): one read of which entities exist and one statement
    for the chunk's new ones; a record whose identity the chunk has seen already is written on its own after it, as
    before (here: skipped, it exists by then); relations alike."""
    api, sent, _ = gates
    people = [{"type": "entity", "name": f"p{i}", "entityType": "Person", "observations": [f"o{i}"]} for i in range(40)]
    links = [{"type": "relation", "from": f"p{i}", "to": f"p{i + 1}", "relationType": "KNOWS"} for i in range(20)]
    lines = [*people, {"type": "entity", "name": "p3", "entityType": "Person"}, *links]
    before = sent.now
    answer = await ok(api, "import_graph", {"format": "jsonl", "data": "\n".join(json.dumps(r) for r in lines)})
    assert (answer["entitiesCreated"], answer["entitiesSkipped"], answer["relationsCreated"]) == (40, 1, 20)
    reads, writes = sent.since(before)
    assert writes == 2 and reads <= 6, (reads, writes)  # one statement for the people, one for the links
    [made] = await history(api, **{**KNOWS_REF, "from_keys": {"name": "p0"}, "to_keys": {"name": "p1"}})
    assert (made["property"], made["after"]) == ("weight", 1.0)

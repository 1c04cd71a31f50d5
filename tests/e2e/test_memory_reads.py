"""The memory profile's search_nodes and open_nodes read in one statement each (issue 28, item 5), and answer
exactly what the shared reads answer (the gate profile's tools, two statements each), on every engine: pages
across labels walked to the end, archived entities left out unless asked, a hub's relations cut at the bound and
continued from the cursor, names that are missing, and an alias opened as its survivor."""

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from tests.conftest import MATRIX_SCHEMAS, ok, open_client
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

PROV = {"source": "reads", "extraction_method": "api"}


def node(label: str, name: str, **properties: Any) -> dict[str, Any]:
    return {"label": label, "merge_keys": {"name": name}, "properties": properties, **PROV}


def link(type_: str, start: tuple[str, str], end: tuple[str, str]) -> dict[str, Any]:
    return {
        "type": type_,
        "from_label": start[0],
        "from_keys": {"name": start[1]},
        "to_label": end[0],
        "to_keys": {"name": end[1]},
        **PROV,
    }


@pytest.fixture
async def both(settings: Settings, graph: GraphBackend) -> AsyncIterator[tuple[Client, Client]]:
    """The gate profile (the shared reads) and the memory profile on one graph, with people, organizations and
    projects that mention rockets, a hub of 120 relations, an archived person and an alias."""
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS]))
    async with open_client(settings, "in_process") as gate, open_client(settings, "in_process", "memory") as memory:
        people = [node("Person", f"P{i:03d}", observations=[f"builds rockets {i}"]) for i in range(30)]
        people[7]["properties"]["tags"] = ["old"]
        orgs = [node("Organization", name, observations=["makes rockets"]) for name in ("Acme", "Acmee", "Orbital")]
        await ok(gate, "write_nodes", {"items": [*people, *orgs]})
        hub = [link("KNOWS", ("Person", "P000"), ("Person", f"Q{i:03d}")) for i in range(120)]
        hub = [{**item, "endpoint_policy": "merge_endpoints"} for item in hub]
        works = [link("WORKS_FOR", ("Person", f"P{i:03d}"), ("Organization", "Acme")) for i in range(1, 6)]
        await ok(gate, "write_relationships", {"items": [*hub, *works]})
        await ok(gate, "archive_entities", {"tags": ["old"]})
        merged = {"label": "Organization", "merge_keys": {"name": "Acmee"}}
        await ok(
            gate,
            "merge_entities",
            {"survivor": {"label": "Organization", "merge_keys": {"name": "Acme"}}, "merged": [merged]},
        )
        yield gate, memory


async def same_answer(both: tuple[Client, Client], tool: str, args: dict[str, Any]) -> dict[str, Any]:
    gate, memory = both
    shared, drop_in = await ok(gate, tool, args), await ok(memory, tool, args)
    assert drop_in == shared, (tool, args)
    return shared


async def test_search_answers_as_the_shared_read_page_after_page(both) -> None:
    for args in ({"query": "rockets"}, {"query": "ROCKETS 1"}, {"query": "nothing at all"}, {"query": "acme"}):
        await same_answer(both, "search_nodes", args)
    for limit in (1, 7, 40):
        cursor, names = None, []
        for _ in range(40):  # bounded: a cursor that never ends fails here
            page = await same_answer(
                both, "search_nodes", {"query": "rockets", "limit": limit, **({"cursor": cursor} if cursor else {})}
            )
            names += [e["name"] for e in page["entities"]]
            if (cursor := page["next_cursor"]) is None:
                break
        assert (
            cursor is None and len(names) == len(set(names)) == 31
        )  # 30 people, 3 organizations: one archived, one merged
    assert "P007" not in names  # archived: left out unless asked
    archived = await same_answer(both, "search_nodes", {"query": "rockets 7", "includeArchived": True})
    assert "P007" in [e["name"] for e in archived["entities"]]
    hub = await same_answer(both, "search_nodes", {"query": "p000"})
    assert hub["truncated"] == ["P000"]  # 120 relations, cut at the bound


async def test_open_answers_as_the_shared_read_aliases_and_cursors_included(both) -> None:
    opened = await same_answer(both, "open_nodes", {"names": ["P001", "Acme", "nobody", "P001"]})
    assert [e["name"] for e in opened["entities"]] == ["P001", "Acme"]  # in node order, each once
    alias = await same_answer(both, "open_nodes", {"names": ["Acmee"]})
    assert [e["name"] for e in alias["entities"]] == ["Acme"]  # merged into Acme: its survivor opens
    assert (await same_answer(both, "open_nodes", {"names": ["P007"]}))["entities"] == []
    await same_answer(both, "open_nodes", {"names": ["P007"], "includeArchived": True})
    first = await same_answer(both, "open_nodes", {"names": ["P000"], "relations_limit": 50})
    assert first["truncated"] == ["P000"] and first["next_cursor"]
    rest = await same_answer(
        both, "open_nodes", {"names": ["P000"], "relations_limit": 100, "cursor": first["next_cursor"]}
    )
    assert len(first["relations"]) + len(rest["relations"]) == 120

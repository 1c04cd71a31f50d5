"""How many statements a memory-profile call sends to the engine (issue 13: a round trip costs more than the
gate's checks). Counted on the served gate's own backend while a real MCP client calls the tools: the engine
answers every statement, the count only watches them go by. A read page is one statement across every
registered label, and a name look-up says which names are aliases, so no second statement asks."""

from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.conftest import ok
from write_gate.serving.config import Settings
from write_gate.surface.server import build_server

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

# One entity in each of three labels, so a page crosses labels; Zoe and Ada know Acme.
ENTITIES = [
    {"name": "Acme", "entityType": "Organization", "observations": ["makes rockets"]},
    {"name": "Ada", "entityType": "Person", "observations": ["writes rockets code"]},
    {"name": "Zoe", "entityType": "Person", "observations": ["flies rockets"]},
    {"name": "Orbit", "entityType": "Project", "observations": ["a rockets project"]},
]


class Counted:
    """The served backend's statements, counted as they pass to the engine (which still runs each one)."""

    def __init__(self, backend: Any) -> None:
        self.statements = 0
        self.dialect = backend.dialect.name
        backend.read = self._counting(backend.read)
        backend.write = self._counting(backend.write)

    def _counting(self, send: Callable[..., Any]) -> Callable[..., Any]:
        async def counted(statement: Any) -> Any:
            self.statements += 1
            return await send(statement)

        return counted


@pytest.fixture
async def served(settings: Settings) -> AsyncIterator[tuple[Client, Counted]]:
    # The gate's own polls (registry, change feed) would be counted too: at the production interval, none falls
    # in a test.
    quiet = settings.model_copy(update={"registry_poll_seconds": 3600, "change_poll_seconds": 3600})
    server = build_server(quiet, profile="memory")
    async with Client(server) as client:
        counted = Counted(server.services.gate.backend)  # type: ignore[attr-defined]
        await ok(client, "create_entities", {"entities": ENTITIES})
        relations = [{"from": name, "to": "Acme", "relationType": "KNOWS"} for name in ("Ada", "Zoe")]
        await ok(client, "create_relations", {"relations": relations})
        # A write nudges the change watcher, which then reads the feed on its own: let it, before counting.
        settled = -1
        while settled != counted.statements:
            settled = counted.statements
            await anyio.sleep(0.3)
        yield client, counted


async def statements_of(served: tuple[Client, Counted], tool: str, args: dict[str, Any]) -> tuple[int, dict]:
    client, counted = served
    before = counted.statements
    answer = await ok(client, tool, args)
    return counted.statements - before, answer


def search_statements(_served: tuple[Client, Counted]) -> int:
    """A page and its expand (on FalkorDB, which builds its indexes in the background, the page's statement also
    asks whether the labels' trigram indexes answer completely: Dialect.text_index_guard)."""
    return 2


async def test_a_search_is_one_page_statement_and_one_expand_however_many_labels(served) -> None:
    sent, answer = await statements_of(served, "search_nodes", {"query": "rockets"})
    assert sent == search_statements(served)
    # Label after label (sorted), each in name order; the relations of every entity found.
    assert [e["name"] for e in answer["entities"]] == ["Acme", "Ada", "Zoe", "Orbit"]
    assert sorted((r["from"], r["to"]) for r in answer["relations"]) == [("Ada", "Acme"), ("Zoe", "Acme")]


async def test_a_search_walked_one_entity_a_page_crosses_every_label_once(served) -> None:
    seen, cursor = [], None
    for _ in range(6):  # bounded: a cursor that never ends fails here
        sent, page = await statements_of(
            served, "search_nodes", {"query": "rockets", "limit": 1, **({"cursor": cursor} if cursor else {})}
        )
        assert sent == search_statements(served)
        seen += [e["name"] for e in page["entities"]]
        if (cursor := page["next_cursor"]) is None:
            break
    assert seen == ["Acme", "Ada", "Zoe", "Orbit"] and cursor is None


async def test_open_nodes_is_a_name_look_up_and_an_expand(served) -> None:
    sent, answer = await statements_of(served, "open_nodes", {"names": ["Ada", "Orbit", "nobody"]})
    assert sent == 2
    assert [e["name"] for e in answer["entities"]] == ["Ada", "Orbit"]


async def test_a_relation_between_entities_that_are_no_aliases_is_one_look_up_and_one_write(served) -> None:
    sent, answer = await statements_of(
        served, "create_relations", {"relations": [{"from": "Orbit", "to": "Ada", "relationType": "KNOWS"}]}
    )
    assert sent == 2
    assert [(r["from"], r["to"]) for r in answer["relations"]] == [("Orbit", "Ada")]


async def test_observations_for_an_entity_that_is_no_alias_are_one_look_up_and_one_write(served) -> None:
    sent, answer = await statements_of(
        served, "add_observations", {"observations": [{"entityName": "Zoe", "contents": ["lands rockets"]}]}
    )
    assert sent == 2
    assert answer["results"] == [{"entityName": "Zoe", "addedObservations": ["lands rockets"]}]


async def test_a_ranked_search_reads_its_candidates_and_their_neighbours(served) -> None:
    """One statement for the candidates of every label (on FalkorDB, with whether their indexes answer
    completely: an index it is still building answers less), one for their neighbours."""
    sent, answer = await statements_of(served, "search_nodes_ranked", {"query": "rockets -project"})
    assert sent == 2
    assert sorted(hit["entity"]["name"] for hit in answer["results"]) == ["Acme", "Ada", "Zoe"]
    assert answer["searched_by"] == "index"

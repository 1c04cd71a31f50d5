"""The gate profile's read tools through a real MCP client: paging, filters, neighbours, schema, errors."""

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from tests.conftest import open_client
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.services.reads import encode_cursor
from write_gate.serving.config import Settings

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]


@pytest.fixture
async def client(settings: Settings, matrix_graph: GraphBackend) -> AsyncIterator[Client]:
    async with open_client(settings, "in_process") as client:
        yield client


async def call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.structured_content
    return result.structured_content


async def write(client: Client, label: str, name: str, **props: Any) -> None:
    args = {
        "label": label,
        "merge_keys": {"name": name},
        "properties": props,
        "source": "t",
        "extraction_method": "api",
    }
    assert not (await client.call_tool("write_node", args)).is_error


async def link(client: Client, a: str, b: str, kind: str = "KNOWS", to_label: str = "Person") -> None:
    args = {
        "type": kind,
        "from_label": "Person",
        "from_keys": {"name": a},
        "to_label": to_label,
        "to_keys": {"name": b},
        "source": "t",
        "extraction_method": "api",
    }
    assert not (await client.call_tool("write_relationship", args)).is_error


async def write_people(client: Client, names: list[str]) -> None:
    items = [
        {
            "label": "Person",
            "merge_keys": {"name": name},
            "properties": {"i": i},
            "source": "t",
            "extraction_method": "api",
        }
        for i, name in enumerate(names)
    ]
    out = await call(client, "write_nodes", items=items)
    assert out["written"] == len(names)


async def link_all(client: Client, pairs: list[tuple[str, str]]) -> None:
    items = [
        {
            "type": "KNOWS",
            "from_label": "Person",
            "from_keys": {"name": a},
            "to_label": "Person",
            "to_keys": {"name": b},
            "source": "t",
            "extraction_method": "api",
        }
        for a, b in pairs
    ]
    out = await call(client, "write_relationships", items=items)
    assert out["written"] == len(pairs)


async def walk(client: Client, limit: int) -> tuple[list[str], list[tuple[str, str]], int]:
    seen: list[str] = []
    relations: list[tuple[str, str]] = []
    cursor, pages = None, 0
    while True:
        page = await call(client, "read_graph", limit=limit, **({"cursor": cursor} if cursor else {}))
        assert len(page["entities"]) <= limit
        seen += [e["name"] for e in page["entities"]]
        relations += [(r["from"], r["to"]) for r in page["relations"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    return seen, relations, pages


async def test_walking_a_1000_node_graph_by_cursor_sees_every_node_and_relation_once(client: Client) -> None:
    names = [f"p{i:04d}" for i in range(1000)]
    await write_people(client, names)
    pairs = [(names[i], names[i + 1]) for i in range(0, 1000, 10)]
    await link_all(client, pairs)
    seen, relations, pages = await walk(client, 64)
    assert pages == 16
    assert sorted(seen) == names and len(seen) == len(set(seen))
    assert sorted(relations) == sorted(pairs)


async def test_a_walk_whose_size_is_a_multiple_of_the_page_ends_without_an_empty_page(client: Client) -> None:
    """The last full page says null: no page is ever empty, and none is missed."""
    await write(client, "Organization", "Acme")  # a second label, so the walk crosses labels too
    names = [f"q{i:03d}" for i in range(127)]
    await write_people(client, names)
    seen, _relations, pages = await walk(client, 64)
    assert pages == 2 and sorted(seen) == sorted([*names, "Acme"])


# Page boundaries (issue 17): counts on and beside a multiple of the page, so a last page that is exactly
# full must still say next_cursor null, and nothing comes twice or is missed.
PAGE = 4
COUNTS = [0, 1, PAGE - 1, PAGE, PAGE + 1, 2 * PAGE, 3 * PAGE]


def pages_for(count: int) -> int:
    return max(1, -(-count // PAGE))  # a first page always comes, even empty


async def pages_of(client: Client, tool: str, **args: Any) -> list[dict[str, Any]]:
    pages: list[dict[str, Any]] = []
    cursor = None
    while len(pages) <= 20:  # bounded: a cursor that never ends fails here, not by hanging
        pages.append(await call(client, tool, **args, **({"cursor": cursor} if cursor else {})))
        if (cursor := pages[-1]["next_cursor"]) is None:
            return pages
    raise AssertionError(f"{tool} kept answering a next_cursor")


async def test_read_graph_pages_end_with_a_null_cursor_at_and_around_a_multiple_of_the_page(client: Client) -> None:
    written: list[str] = []
    for count in COUNTS:
        more = [f"p{i:03d}" for i in range(len(written), count)]
        if more:
            await write_people(client, more)
        written += more
        pages = await pages_of(client, "read_graph", limit=PAGE)
        names = [e["name"] for page in pages for e in page["entities"]]
        assert sorted(names) == written, count  # each once, none missed
        assert len(pages) == pages_for(count), count  # no empty page after a full one
        assert all(len(page["entities"]) == PAGE for page in pages[:-1])
    # A multiple split across labels: the cursor must not survive the last label either.
    await write(client, "Organization", "Acme")
    await write(client, "Organization", "Beta")
    await write(client, "Organization", "Coda")
    await write(client, "Organization", "Dune")
    pages = await pages_of(client, "read_graph", limit=PAGE)
    assert len(pages) == 4 and len([e for page in pages for e in page["entities"]]) == 4 * PAGE


async def test_search_pages_end_with_a_null_cursor_at_and_around_a_multiple_of_the_page(client: Client) -> None:
    # One group of matches per count, each found by its own query.
    await write_people(client, [f"grp{count:02d}-{i:02d}" for count in COUNTS for i in range(count)])
    for count in COUNTS:
        pages = await pages_of(client, "search_nodes", query=f"GRP{count:02d}-", limit=PAGE)
        names = [e["name"] for page in pages for e in page["entities"]]
        assert sorted(names) == [f"grp{count:02d}-{i:02d}" for i in range(count)], count
        assert len(pages) == pages_for(count), count


async def test_open_nodes_relation_pages_end_with_a_null_cursor_at_and_around_a_multiple_of_the_page(
    client: Client,
) -> None:
    hubs = {count: [f"h{count:02d}-{i:02d}" for i in range(count)] for count in COUNTS}
    spokes_of_all = [spoke for spokes in hubs.values() for spoke in spokes]
    await write_people(client, [f"hub{count:02d}" for count in COUNTS] + spokes_of_all)
    await link_all(client, [(f"hub{count:02d}", spoke) for count, spokes in hubs.items() for spoke in spokes])
    for count, spokes in hubs.items():
        pages = await pages_of(client, "open_nodes", names=[f"hub{count:02d}"], relations_limit=PAGE)
        seen = [r["to"] for page in pages for r in page["relations"]]
        assert sorted(seen) == spokes, count  # each relation once
        assert len(pages) == pages_for(count), count
        assert pages[-1]["truncated"] == [] and all(p["truncated"] == [f"hub{count:02d}"] for p in pages[:-1])


async def test_default_page_is_100(client: Client) -> None:
    await write_people(client, [f"n{i}" for i in range(150)])
    page = await call(client, "read_graph")
    assert len(page["entities"]) == 100 and page["next_cursor"]
    rest = await call(client, "read_graph", cursor=page["next_cursor"])
    assert len(rest["entities"]) == 50 and rest["next_cursor"] is None


async def test_labels_filter_and_registry_nodes_are_never_listed(client: Client) -> None:
    await write(client, "Person", "Ada")
    await write(client, "Organization", "Acme")
    everything = await call(client, "read_graph")
    assert sorted(e["name"] for e in everything["entities"]) == ["Acme", "Ada"]  # no :Schema nodes
    only = await call(client, "read_graph", labels=["Organization"])
    assert [e["entityType"] for e in only["entities"]] == ["Organization"]


async def test_entities_carry_provenance(client: Client) -> None:
    await write(client, "Person", "Ada", age=36)
    [ada] = (await call(client, "open_nodes", names=["Ada"]))["entities"]
    assert ada["labels"] == ["Person"] and ada["properties"]["age"] == 36
    assert ada["properties"]["source"] == "t" and ada["properties"]["confidence"] == 0.5
    assert ada["properties"]["extraction_method"] == "api" and "last_updated" in ada["properties"]


async def test_search_pages_matches_and_filters_by_label(client: Client) -> None:
    for i in range(5):
        await write(client, "Person", f"match-{i}")
    await write(client, "Organization", "match-org")
    await write(client, "Person", "other")
    first = await call(client, "search_nodes", query="MATCH", limit=4)
    second = await call(client, "search_nodes", query="MATCH", limit=4, cursor=first["next_cursor"])
    names = [e["name"] for e in first["entities"] + second["entities"]]
    assert sorted(names) == sorted([f"match-{i}" for i in range(5)] + ["match-org"]) and second["next_cursor"] is None
    people = await call(client, "search_nodes", query="match", labels=["Person"])
    assert len(people["entities"]) == 5


async def test_search_finds_text_in_lists_and_the_relations_of_matches_come_along(client: Client) -> None:
    """The matching entities, every relation touching one of them and, in the gate profile, the entities at their
    other ends (MemoryMesh's neighbours); `neighbors: false` answers as the official memory server does."""
    await write(client, "Person", "Ada", observations=["Wrote the first program"])
    await write(client, "Person", "Charles")
    await link(client, "Ada", "Charles")
    official = await call(client, "search_nodes", query="first PROGRAM", neighbors=False)
    assert [e["name"] for e in official["entities"]] == ["Ada"]
    result = await call(client, "search_nodes", query="first PROGRAM")
    assert [e["name"] for e in result["entities"]] == ["Ada", "Charles"]
    assert result["relations"] == official["relations"]
    assert result["relations"] == [
        {
            "from": "Ada",
            "to": "Charles",
            "relationType": "KNOWS",
            "properties": result["relations"][0]["properties"],
            "combined_weight": 1.0,
        }
    ]
    assert result["relations"][0]["properties"]["source"] == "t"


async def test_a_cursor_from_elsewhere_is_invalid_input(client: Client) -> None:
    # The second is a search cursor; then positions no engine holds (past 64 bits, text with a NUL), which answered
    # an empty page as if the walk were over.
    forged = [encode_cursor("read", l="Person", a=2**70), encode_cursor("read", l="Person\x00", a=0)]
    forged += [encode_cursor("read", l="Person", a="x\x00")]
    for cursor in ["garbage", "eyJrIjogInNlYXJjaCIsICJhZnRlciI6IDF9", *forged]:
        result = await client.call_tool("read_graph", {"cursor": cursor})
        assert result.is_error and result.structured_content["error_code"] == "INVALID_INPUT", cursor


async def test_query_text_is_a_parameter(client: Client, graph: GraphBackend) -> None:
    await write(client, "Person", "Ada")
    for query in ["') MATCH (n) DETACH DELETE n //", "\\", "'", '"', "`"]:
        assert (await call(client, "search_nodes", query=query))["entities"] == []
    assert len(await graph.read(Statement("MATCH (n:Person) RETURN n"))) == 1


async def test_get_schema_has_entries_and_live_counts(client: Client) -> None:
    await write(client, "Person", "Ada")
    await write(client, "User", "Bob")
    await write(client, "Organization", "Acme")
    await link(client, "Ada", "Acme", "WORKS_FOR", "Organization")
    schema = await call(client, "get_schema")
    labels = {entry["name"]: entry for entry in schema["node_labels"]}
    assert labels["Person"]["count"] == 2 and labels["Organization"]["count"] == 1 and labels["Entity"]["count"] == 0
    assert labels["Person"]["merge_keys"] == ["name"] and "User" in labels["Person"]["absorbs"]
    assert labels["Person"]["property_types"]["age"] == {"type": "integer"}
    assert labels["Entity"]["fallback"] is True and schema["fallback_label"] == "Entity"
    types = {entry["name"]: entry for entry in schema["relationship_types"]}
    assert types["WORKS_FOR"]["count"] == 1 and types["WORKS_FOR"]["from_labels"] == ["Person"]
    assert schema["extraction_methods"] == ["api", "llm", "manual", "parsed"]
    assert schema["unknown_label_policy"] == "remap"


async def test_search_sees_current_values_only_and_hides_its_own_fields(client: Client) -> None:
    await write(client, "Person", "Ada", motto="first draft")
    await write(client, "Person", "Ada", motto="Analytical Engine")
    assert [e["name"] for e in (await call(client, "search_nodes", query="engine"))["entities"]] == ["Ada"]
    assert (await call(client, "search_nodes", query="first draft"))["entities"] == []
    [ada] = (await call(client, "open_nodes", names=["Ada"]))["entities"]
    assert not [key for key in ada["properties"] if key.startswith("_f_") or key in ("_search", "_key")]


@pytest.mark.parametrize(
    "stored,query",
    [
        ("İstanbul", "İstanbul"),
        ("ΣΊΣΥΦΟΣ", "σίσυφος"),
        ("Straße", "STRASSE"),
        ("Émile Zola", "éMILE"),
        ("ｆｕｌｌｗｉｄｔｈ", "FULLWIDTH"),
    ],
)
async def test_search_folds_case_with_full_unicode_on_both_sides(client: Client, stored: str, query: str) -> None:
    await write(client, "Person", "Someone", city=stored)
    assert [e["name"] for e in (await call(client, "search_nodes", query=query))["entities"]] == ["Someone"]


async def test_a_hub_answers_a_bounded_page_of_its_relations_and_pages_the_rest(client: Client) -> None:
    """Read amplification: a node with hundreds of relationships answers `relations_limit` of them per
    read, names itself in `truncated`, and open_nodes' cursor pages through every one. Its neighbours are
    bounded alike: the other ends of the relations answered, no more."""
    spokes = [f"s{i:04d}" for i in range(600)]
    await write_people(client, ["Hub", *spokes])
    await link_all(client, [("Hub", spoke) for spoke in spokes])
    for tool, args in (("open_nodes", {"names": ["Hub"]}), ("search_nodes", {"query": "hub", "limit": 1})):
        result = await call(client, tool, **args)
        hub, *neighbours = [e["name"] for e in result["entities"]]
        assert hub == "Hub" and neighbours == [r["to"] for r in result["relations"]]
        assert len(result["relations"]) == 100 and result["truncated"] == ["Hub"]
    seen: set[str] = set()
    cursor = None
    for _ in range(10):
        args = {"names": ["Hub"], "relations_limit": 250, **({"cursor": cursor} if cursor else {})}
        page = await call(client, "open_nodes", **args)
        seen |= {r["to"] for r in page["relations"]}
        if (cursor := page["next_cursor"]) is None:
            break
    assert seen == set(spokes) and cursor is None
    # Pages come in the engine's page order (engine id on FalkorDB, `_key` on Memgraph): the hub's page.
    walked = await call(client, "read_graph", labels=["Person"], limit=500)
    if "Hub" not in {e["name"] for e in walked["entities"]}:
        walked = await call(client, "read_graph", labels=["Person"], limit=500, cursor=walked["next_cursor"])
    from_hub = [r for r in walked["relations"] if r["from"] == "Hub"]
    assert len(from_hub) == 100 and walked["truncated"] == ["Hub"]
    assert len((await call(client, "open_nodes", names=["Hub"], relations_limit=7))["relations"]) == 7


async def test_open_nodes_refuses_more_names_than_its_maximum_naming_the_limit(client: Client) -> None:
    from write_gate.services.reads import MAX_OPEN_NAMES

    await write_people(client, ["Ada"])
    assert [e["name"] for e in (await call(client, "open_nodes", names=["Ada"] * MAX_OPEN_NAMES))["entities"]] == [
        "Ada"
    ]
    result = await client.call_tool("open_nodes", {"names": [f"n{i}" for i in range(MAX_OPEN_NAMES + 1)]})
    assert result.is_error
    refusal = result.structured_content
    assert refusal["error_code"] == "INVALID_INPUT"
    assert refusal["details"]["field"] == "names" and refusal["details"]["limit"] == MAX_OPEN_NAMES
    assert refusal["details"]["given"] == MAX_OPEN_NAMES + 1


async def test_open_nodes_pages_its_entities_and_the_walk_answers_each_once(client: Client) -> None:
    """An answer holds at most OPEN_RELATIONS_BUDGET // relations_limit entities (at most OPEN_ENTITIES): with
    relations_limit 1000, 20 of 45; the cursor walks the rest, each entity once, each relation on the pages of
    the entities it touches."""
    from write_gate.services.reads import OPEN_RELATIONS_BUDGET

    per_page = OPEN_RELATIONS_BUDGET // 1000
    names = [f"o{i:02d}" for i in range(2 * per_page + 5)]
    await write_people(client, names)
    await link_all(client, [(names[0], names[-1])])
    args = {"names": list(reversed(names)), "relations_limit": 1000, "neighbors": False}
    pages = await pages_of(client, "open_nodes", **args)
    assert [len(page["entities"]) for page in pages] == [per_page, per_page, 5]
    opened = [e["name"] for page in pages for e in page["entities"]]
    assert sorted(opened) == names and len(opened) == len(names)
    relations = [(r["from"], r["to"]) for page in pages for r in page["relations"]]
    assert set(relations) == {(names[0], names[-1])}
    # The default relations_limit: every name of a normal call in one answer, no cursor (the official answer).
    one = await call(client, "open_nodes", names=names, neighbors=False)
    assert sorted(e["name"] for e in one["entities"]) == names and one["next_cursor"] is None

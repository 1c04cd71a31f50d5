"""search_nodes from the trigram index (`core.grams`, `core.cypher.substring_search`) answers exactly what a scan
would: every entity one of whose values, folded, contains the folded query (`fold(query) in fold(value)`), for
seeded random texts and queries (punctuation, Unicode, letter case, queries shorter than a trigram, across word
boundaries, none at all), after writes that create nodes (trigrams cut by the gate) and writes that change their
text (cut by the statement); through the cap's overflow to the scan, a label whose trigrams are not indexed, and
nodes given their trigrams by the migration. Runs on every engine tier (the Bolt tier runs Memgraph's statements)."""

import random
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from tests.conftest import TESTS, ok, open_client
from write_gate.core.cypher.clauses import grams_of, search_text, search_text_of
from write_gate.core.cypher.statement import Statement
from write_gate.core.grams import GRAMS_FIELD, grams_text
from write_gate.core.identity import SEARCH_FIELD, fold
from write_gate.engines import GraphBackend
from write_gate.engines.falkordb import FalkorDBBackend
from write_gate.services import reads
from write_gate.serving.config import Settings
from write_gate.store.grams import backfill_grams
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

# Words and pieces the texts are made of: letters of several scripts and cases, digits, punctuation of every kind
# the stand-ins cover and some they do not (a euro sign, an emoji), so queries land on and across all of them.
PIECES = [
    "alpha",
    "Beta",
    "GAMMA",
    "delta-9",
    "o'neil",
    "co-op",
    "x.y",
    "a_b",
    "50%",
    "#tag",
    "(paren)",
    "[box]",
    "Émile",
    "ÉCOLE",
    "straße",
    "STRASSE",
    "ΣΊΣΥΦΟΣ",
    "σίσυφος",
    "İstanbul",
    "东京",
    "€12",
    "🙂ok",
    "naïve",
    "“quoted”",
    "it’s",
    "a—b",
    "tab\tin",
    "x",
    "yz",
    "123",
    "1234",
    "q",
    "and",
    "the",
]
ENTITIES = 40


def sentence(rng: random.Random) -> str:
    return (" " if rng.random() < 0.7 else "").join(rng.choice(PIECES) for _ in range(rng.randint(1, 5)))


def queries(rng: random.Random, texts: list[str], count: int) -> list[str]:
    """Pieces of the texts (any length from one character, across word boundaries), with their case changed,
    and strings no text holds."""
    found = []
    for _ in range(count):
        text = rng.choice(texts)
        start = rng.randrange(len(text))
        piece = text[start : start + rng.choice([1, 2, 3, 4, 6, 9, 14])]
        found.append(rng.choice([piece, piece.upper(), piece.lower(), piece.swapcase()]))
    return found + ["", " ", "zzz", "qqqq", "alpha!beta", "€", "🙂", "-", "σ", "ss", "co-op x.y"]


def expected(entities: dict[str, list[str]], query: str) -> set[str]:
    """What a scan answers: entities one of whose values (name, type, observations) contains the query, folded."""
    q = fold(query)
    return {name for name, values in entities.items() if any(q in fold(v) for v in values)}


async def found(client: Client, query: str, **args: Any) -> set[str]:
    answer = await ok(client, "search_nodes", {"query": query, "limit": 1000, **args})
    assert answer.get("next_cursor") is None
    return {entity["name"] for entity in answer["entities"]}


async def walked(client: Client, query: str) -> list[str]:
    """Every name a search answers, page after page of 3, in the order the pages gave them."""
    seen: list[str] = []
    cursor = None
    while True:
        args = {"query": query, "limit": 3, **({"cursor": cursor} if cursor else {})}
        answer = await ok(client, "search_nodes", args)
        seen += [entity["name"] for entity in answer["entities"]]
        if (cursor := answer.get("next_cursor")) is None:
            return seen


@pytest.fixture
async def memory(settings: Settings, graph: GraphBackend) -> AsyncIterator[tuple[Client, GraphBackend]]:
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "memory"]))
    async with open_client(settings, "in_process", profile="memory") as client:
        yield client, graph


async def written(client: Client, rng: random.Random) -> dict[str, list[str]]:
    """ENTITIES entities created, then some observations added and some deleted (text the statement re-cuts);
    each entity's values as the official server searches them: name, type, observations."""
    entities = {f"{sentence(rng)} #{i}": [sentence(rng) for _ in range(rng.randint(0, 3))] for i in range(ENTITIES)}
    batch = [{"name": name, "entityType": "Entity", "observations": obs} for name, obs in entities.items()]
    await ok(client, "create_entities", {"entities": batch})
    names = list(entities)
    added = {name: [sentence(rng) for _ in range(2)] for name in rng.sample(names, 10)}
    adds = [{"entityName": name, "contents": obs} for name, obs in added.items()]
    await ok(client, "add_observations", {"observations": adds})
    for name, obs in added.items():
        entities[name] += [o for o in obs if o not in entities[name]]
    dropped = {name: entities[name][:1] for name in rng.sample(names, 10) if entities[name]}
    await ok(
        client, "delete_observations", {"deletions": [{"entityName": n, "observations": o} for n, o in dropped.items()]}
    )
    for name, obs in dropped.items():
        entities[name] = [o for o in entities[name] if o not in obs]
    return {name: [name, "Entity", *obs] for name, obs in entities.items()}


async def test_search_nodes_answers_what_contains_the_query(memory: tuple[Client, GraphBackend]) -> None:
    client, _graph = memory
    rng = random.Random(35_2)
    entities = await written(client, rng)
    texts = [value for values in entities.values() for value in values]
    for query in queries(rng, texts, 120):
        assert await found(client, query) == expected(entities, query), query


async def test_a_walk_of_small_pages_meets_each_match_once(memory: tuple[Client, GraphBackend]) -> None:
    client, _graph = memory
    entities = await written(client, random.Random(7))
    for query in ("a", "alpha", "co-op", "#1", "ss"):
        assert sorted(await walked(client, query)) == sorted(expected(entities, query)), query


async def test_a_label_past_the_cap_is_paged_by_the_scan(
    memory: tuple[Client, GraphBackend], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the cap of candidates, a label's page comes from the scan: the same answer."""
    client, _graph = memory
    rng = random.Random(11)
    entities = await written(client, rng)
    monkeypatch.setattr(reads, "CANDIDATE_CAP", 3)
    for query in ("alpha", "#1", "ent", "zzz", "straße"):
        assert await found(client, query) == expected(entities, query), query


async def test_pages_across_labels_meet_each_match_once(
    memory: tuple[Client, GraphBackend], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Entities of three labels, walked in pages of 3 with the cap at its default and at 3 (labels past it are
    scanned, and some of those then hold no match at all): each match once, label after label."""
    client, _graph = memory
    rng = random.Random(35_3)
    named = {f"{sentence(rng)} #{i}": [sentence(rng) for _ in range(rng.randint(0, 2))] for i in range(60)}
    types = {name: rng.choice(["person", "company", "Entity"]) for name in named}
    batch = [{"name": name, "entityType": types[name], "observations": obs} for name, obs in named.items()]
    await ok(client, "create_entities", {"entities": batch})
    entities = {name: [name, *obs] for name, obs in named.items()}
    texts = [value for values in entities.values() for value in values]
    # The type's text (as written, and its label's) is searched too: queries inside a type's word are left out.
    words = ("person", "company", "organization", "entity")
    asked = [q for q in queries(rng, texts, 40) if not any(fold(q) in word for word in words)]
    for cap in (reads.CANDIDATE_CAP, 3):
        monkeypatch.setattr(reads, "CANDIDATE_CAP", cap)
        for query in asked:
            seen = await walked(client, query)
            assert sorted(seen) == sorted(expected(entities, query)), (cap, query)
            assert len(seen) == len(set(seen)), (cap, query)


async def test_a_label_past_the_cap_with_no_match_leaves_the_next_labels_pages_whole(
    memory: tuple[Client, GraphBackend], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first label's candidates pass the cap but none holds the query (each holds its trigrams apart), so its
    scan answers nothing: the next label's matches still come whole, page after page."""
    client, _graph = memory
    apart = [{"name": f"abc bcd {i}", "entityType": "Entity", "observations": []} for i in range(4)]
    matches = [{"name": f"abcd {i}", "entityType": "company", "observations": []} for i in range(5)]
    await ok(client, "create_entities", {"entities": apart + matches})
    monkeypatch.setattr(reads, "CANDIDATE_CAP", 3)
    assert sorted(await walked(client, "abcd")) == [m["name"] for m in matches]


async def test_a_statement_builds_the_search_text_and_trigrams_the_gate_does(graph: GraphBackend) -> None:
    """A write whose text the statement rebuilds gets the search text and trigrams the gate gives a node it creates,
    texts that reach 512 and 1,024 bytes included (FalkorDB 4.16's `+` loses characters there: joined natively)."""
    rng = random.Random(3)
    lists = [[], [""], ["a"], ["abc"], ["x", "y"], ["a" * 200], ["é" * 130], ["a" * 510, "bc"], ["a" * 1021, "b"]]
    lists += [["a" * n, "b" * (1022 - n)] for n in range(0, 1022, 73)] + [["c" * 509, "d"], ["c" * 1020, "de"]]
    lists += [[sentence(rng) for _ in range(rng.randint(1, 8))] for _ in range(30)]
    dialect = graph.dialect
    await graph.write(Statement("CREATE (:Existing)"))  # FalkorDB: a read of a graph not made yet finds nothing
    statement = Statement(
        f"UNWIND $maps AS p WITH {search_text_of('p', dialect)} AS t RETURN t, {grams_of('t', dialect)} AS g",
        {"maps": [{"_f_x": values} for values in lists]},
    )
    rows = await graph.read(statement)
    texts = [search_text({"_f_x": values}) for values in lists]
    assert [row["t"] for row in rows] == texts
    assert [row["g"] for row in rows] == [grams_text(text) for text in texts]


async def test_nodes_without_trigrams_get_them_and_are_found(memory: tuple[Client, GraphBackend]) -> None:
    """Migration 0014 on nodes written before it: their trigrams, cut from their search text."""
    client, graph = memory
    entities = await written(client, random.Random(5))
    await graph.write(Statement(f"MATCH (n:Entity) SET n.{GRAMS_FIELD} = null"))
    assert await backfill_grams(graph) == ENTITIES
    rows = await graph.read(Statement(f"MATCH (n:Entity) RETURN n.{SEARCH_FIELD} AS s, n.{GRAMS_FIELD} AS g"))
    assert all(row["g"] == grams_text(row["s"]) for row in rows)
    for query in ("alpha", "co-op", "σίσ"):
        assert await found(client, query) == expected(entities, query), query


async def test_a_label_whose_trigrams_are_not_indexed_is_scanned(settings: Settings, graph: GraphBackend) -> None:
    """FalkorDB: an index without the trigrams' field (or still being built) is not asked: the label is scanned."""
    if not isinstance(graph, FalkorDBBackend):
        pytest.skip("FalkorDB's index states")
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "memory"]))
    await graph.write(Statement("CALL db.idx.fulltext.drop('Entity')"))
    await graph.write(Statement("CALL db.idx.fulltext.createNodeIndex('Entity', '_search')"))  # no trigrams
    async with open_client(settings, "in_process", profile="memory") as client:
        entities = await written(client, random.Random(9))
        for query in ("alpha", "co-op"):
            assert await found(client, query) == expected(entities, query), query

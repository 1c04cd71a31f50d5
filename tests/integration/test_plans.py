"""What each read costs, in FalkorDB's own words: its plan, and on a grown graph the records each operation produced.

1. Every read shape the gate can send (the golden files) is explained by the engine (GRAPH.EXPLAIN) on a graph with
   the gate's indexes. A shape that scans a label whose nodes grow with the graph (entities, change records,
   conflicts, quarantine, keys) or every node fails here, unless SCANS names it with why it may: so the next
   statement written the old way fails at once, and the list is what is left to bound.
2. On a graph grown through the gate, each paged read (a node page at any depth, a search page, an export page,
   a backup page, a feed page from the oldest cursor and from one deep in the feed, the newest changes) runs under
   GRAPH.PROFILE: no operation may produce more records than a small multiple of what the page answers.
3. On a history of 50,000 change records (and thousands of conflicts and safe retries' records), each prune's
   chunk (a write: GRAPH.PROFILE runs it) reads about its chunk, however many records lie before its cutoff.
"""

import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.conftest import MATRIX_SCHEMAS, open_client
from tests.integration.test_statement_shapes import runnable
from tests.unit.test_golden import READS, shapes
from write_gate.core.agent_tallies import Cursors
from write_gate.core.clock import utc_now
from write_gate.core.cypher import backup as backup_cypher
from write_gate.core.cypher import exports as export_cypher
from write_gate.core.cypher import reads as read_cypher
from write_gate.core.cypher import resolution as resolution_cypher
from write_gate.core.cypher import statistics as statistics_cypher
from write_gate.core.cypher import substring_search, text_search
from write_gate.core.cypher.change_order import numbered
from write_gate.core.cypher.history_retention import prune_changes, prune_conflicts
from write_gate.core.cypher.idempotency import IDEMPOTENCY_LABEL, prune_records
from write_gate.core.cypher.statement import Statement
from write_gate.core.feed_windows import SEQ_NUMBER, cap_for, seq_number
from write_gate.core.grams import query_grams
from write_gate.core.history import CHANGE_LABEL, CONFLICT_LABEL
from write_gate.core.identity import identity_key
from write_gate.engines import GraphBackend
from write_gate.engines.falkordb import FalkorDBBackend
from write_gate.services import agent_tallies, stat_counts
from write_gate.services.change_feed import feed_page, newest
from write_gate.services.reads import CANDIDATE_CAP
from write_gate.services.search import FIRST_BLOCK, in_search_text
from write_gate.serving.config import Settings
from write_gate.store.graph_registry import GraphRegistrySource
from write_gate.store.migrations import migrate
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = pytest.mark.anyio

# Shapes that still read a whole label, each with why.
_ONCE = "a migration's or restore's one-off pass"
_SEARCH = (
    "a substring search the trigram index cannot answer (shorter than a trigram, no trigram an index holds, or past "
    "its cap of candidates: core/cypher/substring_search.py) scans by id and stops at its page"
)
_STATS = (
    "get_graph_stats' full scan: only while a graph written before the writes kept counts is walked once "
    "(core/stat_counts.py)"
)
_TALLIES = (
    "the console's agents page over the history: only while a history older than the agent tallies is folded "
    "(core/agent_tallies.py)"
)
_COUNTERS = (
    "the statistics' counters: one node per label or type and value counted (agents, sources, ten confidence "
    "buckets, days), however many entities they count"
)
SCANS: dict[str, str] = {
    "backfill_without_key": _ONCE,
    "read_backup_count_nodes": _ONCE + ": a restore counts what the target holds, once",
    "read_archive_candidates": "archive_entities picks by age, importance and tags across the graph: an admin's sweep",
    "read_ids_by_name": "a label identified by more than its name is found by name through its label (no index on "
    "a name that is not its identity: it would cost each of its writes)",
    "read_quarantine_list": "the quarantine holds at most quarantine_max_entries (10,000 by default)",
    "read_quarantine_select": "the quarantine holds at most quarantine_max_entries (10,000 by default)",
    "read_text_search_scanned": "the ranked search reads labels whose full-text index is still being built",
    "read_text_search_scanned_archived": "the ranked search reads labels whose full-text index is still being built",
    "read_text_search_scanned_knowledge": "the ranked search reads labels whose full-text index is still being built",
    "read_page_search": _SEARCH,
    "read_page_search_by_id": _SEARCH + "; the limit stops it only once a page of matches is found",
    "read_page_search_by_id_first": _SEARCH + "; the limit stops it only once a page of matches is found",
    "read_page_search_claims": _SEARCH,
    "read_page_search_knowledge": _SEARCH,
    "read_stats_node_tallies": _STATS,
    "read_stat_counters": _COUNTERS,
    "read_stat_ends": _COUNTERS,
    "read_stat_ready": "one node: where the statistics' first walk of a graph is",
    "read_stats_oldest_and_newest": _STATS,
    "read_stats_relationship_tallies": _STATS,
    "read_console_agent_rejections": "the quarantine holds at most quarantine_max_entries (10,000 by default)",
    "read_console_agent_writes": _TALLIES,
    "read_console_agent_held_writes": _TALLIES,
    "read_tally_cursors": "one node: where the statistics' walk and the agent tallies' folds are",
    "read_agent_tallies": "the agent tallies: one node per agent that ever wrote, however many writes",
    "read_console_fallback_drift": _STATS,
    "read_console_rejections_per_minute": _STATS,
}

_SCANNING = re.compile(r"(All Node Scan|Node By Label Scan \| \((\w+):`?(\w+)`?\))")
# Labels whose nodes stay few whatever the graph holds: the registry, migrations, saved searches.
_FEW = {"Schema", "WriteGateMigration", "WriteGateRegistryVersion", "SavedSearch", "Existing"}


def _depth(line: str) -> int:
    return len(line) - len(line.lstrip())


def _stops_at_its_limit(plan: list[str], at: int) -> bool:
    """Whether the operation at line `at` feeds a Limit with nothing between that must read every row first."""
    depth = _depth(plan[at])
    for line in reversed(plan[:at]):
        if _depth(line) < depth:
            depth = _depth(line)
            operation = line.strip().split(" |")[0]
            if operation == "Limit":
                return True
            if operation in ("Sort", "Aggregate", "Distinct"):
                return False
    return False


def scans(plan: list[str]) -> list[str]:
    """The scans of every node, or of a label whose nodes grow, that do not stop at a page's limit."""
    found = []
    for at, line in enumerate(plan):
        match = _SCANNING.search(line)
        if match and (match.group(3) is None or match.group(3) not in _FEW) and not _stops_at_its_limit(plan, at):
            found.append(line.strip())
    return found


@pytest.fixture
async def falkordb(graph: GraphBackend) -> AsyncIterator[FalkorDBBackend]:
    assert isinstance(graph, FalkorDBBackend)
    await graph.write(Statement("CREATE (:Existing)"))  # FalkorDB: a graph is made by its first write
    await migrate(graph)
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS]))
    yield graph


async def test_no_read_shape_scans_what_grows_unless_it_says_why(falkordb: FalkorDBBackend) -> None:
    for label in ("Person", "Organization"):  # the golden shapes' labels, indexed as a registry load does
        await falkordb.ensure_index(label, "_key")
        await falkordb.ensure_text_index(label)
    for index in ("embedding_index_0", "embedding_index_1"):  # made by a gate with embeddings on, before it reads
        await falkordb.write(runnable("falkordb", index))
    found = {}
    for name in sorted(READS & set(shapes("falkordb"))):
        plan = await falkordb.plan(runnable("falkordb", name))
        if (scanned := scans(plan)) and name not in SCANS:
            found[name] = scanned
    assert found == {}, "these reads scan what grows; bound them, or say why in SCANS:\n" + "\n".join(
        f"{name}: {lines}" for name, lines in found.items()
    )
    assert set(SCANS) <= READS  # no stale entry


async def test_a_label_is_walked_by_id_only_past_a_cursor(falkordb: FalkorDBBackend) -> None:
    """FalkorDB's scan of a label by id walks every id from its bound and tests each one's label: a label with one
    node among a million cost 133 ms, against its plain scan's 0.002 ms. So a page scans by id only the label its
    cursor points into; every other label, and every label of a first page, by its own nodes (in id order too)."""
    first = read_cypher.page_of_labels(("Organization", "Person"), searching=False, by_id=True, resume=False)
    resumed = read_cypher.page_of_labels(("Organization", "Person"), searching=True, by_id=True)
    assert first is not None and resumed is not None
    first_plan = await falkordb.plan(Statement(first.text, {"limit": 10}))
    resumed_plan = await falkordb.plan(Statement(resumed.text, {"after": 5, "limit": 10, "query": "a"}))
    by_id = "Node By Label and ID Scan"
    assert not any(by_id in line for line in first_plan), first_plan
    assert [line.strip() for line in resumed_plan if by_id in line] == [f"{by_id} | (n:Organization)"], resumed_plan
    export = export_cypher.export_page("Person", by_id=True, resume=False)
    dups = resolution_cypher.candidates("Person", ["email"], by_id=True, resume=False)
    assert not any(by_id in line for line in await falkordb.plan(Statement(dups.text, {"limit": 10})))
    assert not any(by_id in line for line in await falkordb.plan(Statement(export.text, {**EXPORT, "limit": 10})))


EXPORT = {"include_archived": False, "start": None, "end": None, "min_confidence": None, "tags": None}


def produced(plan: list[str]) -> int:
    """The most records any one operation produced."""
    return max(int(n) for n in re.findall(r"Records produced: (\d+)", "\n".join(plan)))


async def profiled(backend: FalkorDBBackend, statement: Statement) -> tuple[list[dict[str, Any]], int]:
    return await backend.read(statement), produced(await backend.plan(statement, profile=True))


NODES = 3000
BATCH = 300
PAGE = 50


@pytest.fixture
async def grown(settings: Settings, falkordb: FalkorDBBackend) -> FalkorDBBackend:
    """NODES :Person nodes written through the gate in batches (each leaves its change records), and a few
    :Organization ones, so pages cross labels."""
    async with open_client(settings, "in_process") as client:
        for start in range(0, NODES, BATCH):
            items = [
                {
                    "label": "Person",
                    "merge_keys": {"name": f"person {i:05d}"},
                    "properties": {"age": i % 90},
                    "source": "plans",
                    "extraction_method": "api",
                }
                for i in range(start, start + BATCH)
            ]
            written = await client.call_tool("write_nodes", {"items": items})
            assert not written.is_error, written.structured_content
        for i in range(5):
            org = {"label": "Organization", "merge_keys": {"name": f"org {i}"}, "source": "plans"}
            written = await client.call_tool("write_node", {**org, "extraction_method": "api"})
            assert not written.is_error, written.structured_content
    return falkordb


async def test_a_page_reads_what_it_answers(grown: FalkorDBBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each page's most productive operation produced at most twice the page (node pages: a label or two at
    once); each of the feed's reads at most its probe's cap and what one millisecond holds (a batch's records
    share their `seq`, and a window is never narrower than one millisecond), whatever the feed holds besides."""
    bound = 2 * (PAGE + 1)  # a page asks for one more than it answers; two labels may each answer one page
    ids = [row["id"] for row in await grown.read(Statement("MATCH (n:Person) RETURN id(n) AS id ORDER BY id"))]
    deep = ids[len(ids) * 2 // 3]
    node_page = read_cypher.page_of_labels(("Organization", "Person"), searching=False, by_id=True)
    search_page = read_cypher.page_of_labels(("Organization", "Person"), searching=True, by_id=True)
    substring_page = substring_search.gram_page(grown.dialect, ("Organization", "Person"))
    assert node_page is not None and search_page is not None and substring_page is not None
    rare = "person 01234"  # one node holds it; its trigrams are each held by one in ten nodes or more
    export = EXPORT
    checks = {
        "read_graph page, deep": Statement(node_page.text, {"after": deep, "limit": PAGE + 1}),
        "search page, a common word": Statement(search_page.text, {"after": -1, "limit": PAGE + 1, "query": "person"}),
        "export page, deep": Statement(
            export_cypher.export_page("Person", by_id=True).text, {**export, "after": deep, "limit": PAGE}
        ),
        "backup node page, deep": Statement(backup_cypher.node_page(True).text, {"cursor": deep, "limit": PAGE}),
        "backup relationship page, deep": Statement(
            backup_cypher.relationship_page(True).text, {"cursor": deep, "limit": PAGE}
        ),
    }
    for name, statement in checks.items():
        rows, most = await profiled(grown, statement)
        assert rows and most <= bound, (name, most)

    # A find_duplicates page reads its page, wherever it lies in the label; by `_key` (FalkorDB's string range
    # index, Memgraph's page order) the same page read every node past its cursor and sorted them.
    dups = resolution_cypher.candidates("Person", ["email", "url"], by_id=True)
    for after in (-1, ids[0], deep):
        rows, most = await profiled(grown, Statement(dups.text, {"after": after, "limit": PAGE + 1}))
        assert len(rows) == PAGE + 1 and most <= bound, (after, most)
    by_key = resolution_cypher.candidates("Person", ["email", "url"], by_id=False)
    rows, most = await profiled(
        grown, Statement(by_key.text, {"after": identity_key({"name": "person 00100"}), "limit": PAGE + 1})
    )
    assert len(rows) == PAGE + 1 and most > NODES // 2, most  # the check can fail

    # The feed: every read it sends for a page, from the oldest cursor and from deep in the feed.
    sent: list[int] = []

    async def read(statement: Statement) -> list[dict[str, Any]]:
        rows, most = await profiled(grown, statement)
        sent.append(most)
        return rows

    horizon = utc_now()
    FEED = PAGE // 3  # a probe's cap (8 records a change) below a batch: its millisecond is crowded
    assert cap_for(FEED + 1) < BATCH
    # A batch's records share a millisecond: the feed reads it by windows of its keys, the newest changes and the
    # tallies' fold read it whole (with the last writes beside it).
    dense = BATCH + 5
    first = await feed_page(read, "", "", horizon, None, FEED + 1)
    assert len(first) == FEED + 1 and max(sent) <= cap_for(FEED + 1), sent
    assert len(sent) <= 8, sent  # probes included: a handful of round trips
    places = await grown.read(
        Statement(
            "MATCH (h:WriteGateChange) RETURN h.seq AS seq, h.seq_k AS key, h.change_id AS id ORDER BY seq, key, id"
        )
    )
    middle = places[NODES // 2]
    for cursor in ((middle["seq"], None, ""), (middle["seq"], middle["key"], middle["id"])):  # a batch's start, inside
        sent.clear()
        later = await feed_page(read, cursor[0], cursor[2], horizon, None, FEED + 1, cursor[1])
        assert len(later) == FEED + 1 and max(sent) <= cap_for(FEED + 1), (cursor, sent)
        assert len(sent) <= 8, sent
    assert [(row["seq"], row["key"], row["change_id"]) for row in later] == [
        (p["seq"], p["key"], p["id"]) for p in places[NODES // 2 + 1 : NODES // 2 + FEED + 2]
    ]
    sent.clear()
    assert len(await newest(read, None, 20, utc_now())) == 20 and max(sent) <= cap_for(20) + dense, sent
    # The engine answers a stretch's numbers oldest first: good guesses after a cursor, poor ones back from now,
    # where the stretch halves in time instead (a dozen or two probes of at most a cap each).
    assert len(sent) <= 24, sent

    # A page of the agent tallies' fold (the changes, their other records, the conflicts), from the oldest cursor
    # and from deep in the feed: each read as the feed's.
    monkeypatch.setattr(agent_tallies, "PAGE", PAGE)
    for at in (Cursors(), Cursors(seq=middle["seq"])):
        sent.clear()
        page = await agent_tallies.tally_page(read, at, horizon)
        assert sum(t.writes for t in page.tallies.values()) == PAGE and max(sent) <= cap_for(PAGE) + dense, sent
        assert len(sent) <= 10, sent

    # A substring search from the trigram index reads its few candidates, not the label (after the feed's reads:
    # those count round trips in time since the last write).
    params = {
        "after": -1,
        "limit": PAGE + 1,
        "query": rare,
        "cap": CANDIDATE_CAP,
        "guarded": ["Organization", "Person"],
    }
    params["grams"] = grown.dialect.gram_query(query_grams(rare))
    rows, most = await profiled(grown, Statement(substring_page.text, params))
    held = await grown.read(Statement("MATCH (n:Person {name: $name}) RETURN id(n) AS id", {"name": rare}))
    assert [row["id"] for row in rows] == [held[0]["id"]] and most <= bound, most

    # A ranked search's first page of a word every node holds reads the first block of candidates; the engine still
    # scores every match to order them (its full-text procedure has no top-k), which the gate does not read.
    ranked = text_search.indexed_candidates(grown.dialect, ["Person"], filtered=False)
    query = {"query": in_search_text("person", "redisearch"), "skip": 0, "window": FIRST_BLOCK, "guarded": ["Person"]}
    plan = await grown.plan(Statement(ranked.text, query), profile=True)
    results = [line for line in plan if line.strip().startswith("Results")]
    assert results and f"Records produced: {FIRST_BLOCK}" in results[0], plan
    assert f"Records produced: {NODES}" in "\n".join(plan), plan  # the check can fail: the matches are there


HISTORY = 50_000
CHUNK = 1_000
DAY_MS = 86_400_000
# The `i`th of `n` stamps over 25 days of November, in an order that scatters them (7919 is prime to every `n`
# here), as a history of many subjects lies: a record's text as core/clock.py writes it, built by the engine.
_PAD = "right('0' + toString({}), 2)"
_STAMP = (
    "'2026-11-' + {day} + 'T' + {hour} + ':' + {minute} + ':' + {second} + '.' + right('00' + toString(ms % 1000), 3)"
    " + 'Z'"
).format(
    day=_PAD.format("1 + ms / 86400000"),
    hour=_PAD.format("ms / 3600000 % 24"),
    minute=_PAD.format("ms / 60000 % 60"),
    second=_PAD.format("ms / 1000 % 60"),
)


def stamp(i: int, n: int) -> str:
    ms = i * (25 * DAY_MS // n)
    return f"2026-11-{1 + ms // DAY_MS:02d}T{ms // 3_600_000 % 24:02d}:{ms // 60_000 % 60:02d}:" + (
        f"{ms // 1000 % 60:02d}.{ms % 1000:03d}Z"
    )


async def records(backend: FalkorDBBackend, label: str, n: int, properties: str = "") -> None:
    """`n` records of `label` with an `at` and its `seq_n` as the gate writes it (numbered: change_order.py)."""
    await backend.write(
        Statement(
            f"UNWIND range(0, {n - 1}) AS i WITH i, i * 7919 % {n} * {25 * DAY_MS // n} AS ms\n"
            f"WITH i, {_STAMP} AS at CREATE (r:{label} {{at: at{properties}}}) SET {numbered('r', 'at')}"
        )
    )


async def test_a_prune_chunk_reads_about_its_chunk(falkordb: FalkorDBBackend) -> None:
    """On a history of HISTORY change records, and two chunks of conflicts (a third of them open) and of safe
    retries' records, a cutoff a fifth of the way into the history: each prune deletes its chunk, and its most
    productive operation produced at most twice it. The string range on `at` the change prune used read far past
    its chunk (and cost every record it read): a fifth of the history before the cutoff, about five a deletion."""
    few = 2 * CHUNK
    await records(falkordb, CHANGE_LABEL, HISTORY)
    await records(falkordb, CONFLICT_LABEL, few, ", status: ['open', 'settled', 'resolved'][i % 3]")
    await records(falkordb, IDEMPOTENCY_LABEL, few, ", id: 'claim ' + toString(i)")
    probe = Statement(
        f"MATCH (r:{CHANGE_LABEL}) WHERE r.at = $at RETURN r.{SEQ_NUMBER} AS n", {"at": stamp(7, HISTORY)}
    )
    assert await falkordb.read(probe) == [{"n": seq_number(stamp(7, HISTORY))}]  # the engine's stamps are ours

    cutoff = stamp(HISTORY // 5, HISTORY)
    string_range = Statement(
        f"MATCH (r:{CHANGE_LABEL}) WHERE (r.at < $cutoff AND r.at + '' < $cutoff)\nWITH r LIMIT {CHUNK}\n"
        "DETACH DELETE r\nRETURN count(*) AS deleted",
        {"cutoff": cutoff},
    )
    assert produced(await falkordb.plan(string_range, profile=True)) > 2 * CHUNK  # the check can fail
    for name, statement in {
        "changes": prune_changes(cutoff, CHUNK),
        "conflicts": prune_conflicts(stamp(few * 9 // 10, few), CHUNK),  # two decided conflicts in three
        "safe retries' records": prune_records(stamp(few * 3 // 5, few), CHUNK),
    }.items():
        plan = await falkordb.plan(statement, profile=True)
        deleted = re.search(r"Delete \| Records produced: (\d+)", "\n".join(plan))
        assert deleted and int(deleted.group(1)) == CHUNK, (name, plan)
        assert produced(plan) <= 2 * CHUNK, (name, plan)


async def test_a_page_resumed_in_a_sparse_label_reads_that_labels_own_nodes(
    settings: Settings, falkordb: FalkorDBBackend
) -> None:
    """A page resumed inside a label that holds few of the graph's nodes reads the label's own nodes, filtered past
    the cursor, instead of walking every id past it (which GRAPH.PROFILE does not count: it produces only the
    label's rows, but one node among a million cost 133 ms); the walk through the tool still answers each node
    once, in order."""
    org = "CREATE (:Organization {_key: 'org ' + toString(i), name: 'org ' + toString(i)})"
    await falkordb.write(Statement(f"UNWIND range(1, 3) AS i {org}"))
    await falkordb.write(Statement("UNWIND range(1, 20000) AS i CREATE (:Person {_key: 'p' + toString(i)})"))
    await falkordb.write(Statement(f"UNWIND range(4, 6) AS i {org}"))
    orgs = [row["id"] for row in await falkordb.read(Statement("MATCH (n:Organization) RETURN id(n) AS id"))]
    assert read_cypher.resume_by_own_scan(len(orgs), 20_000 + len(orgs), 3)
    assert not read_cypher.resume_by_own_scan(20_000, 20_000 + len(orgs), 3)  # a dense label: by id
    own = read_cypher.page_of_labels(("Organization",), searching=False, by_id=True, own_scan=True)
    assert own is not None
    statement = Statement(own.text, {"after": orgs[2], "limit": 3})
    plan = await falkordb.plan(statement, profile=True)
    assert not any("Node By Label and ID Scan" in line for line in plan), plan
    assert [row["id"] for row in await falkordb.read(statement)] == orgs[3:]
    assert produced(plan) <= len(orgs)
    async with open_client(settings, "in_process") as client:
        walked, cursor = [], None
        while True:
            args = {"labels": ["Organization"], "limit": 2, **({"cursor": cursor} if cursor else {})}
            page = (await client.call_tool("read_graph", args)).structured_content
            walked += [entity["name"] for entity in page["entities"]]
            if (cursor := page["next_cursor"]) is None:
                break
    assert walked == [f"org {i}" for i in range(1, 7)]


def unwound(plan: list[str]) -> int:
    """The records the plan's Unwind operations produced, together."""
    return sum(int(n) for n in re.findall(r"Unwind \| Records produced: (\d+)", "\n".join(plan)))


async def test_the_statistics_group_before_they_unwind(grown: FalkorDBBackend) -> None:
    """get_graph_stats' tallies (issue 35, item 3) still read every entity and relationship (no counter or index
    answers a count by agent, source, confidence or day), but once: the engine groups them by all their dimensions
    first and unwinds each group's values, so the Unwind produces a few rows a group, never five a node (as it
    did: 15,000 records for 3,000 nodes, and an aggregate over all of them)."""
    links = Statement(  # each two Persons in id order linked, from one scan (a match by name per pair scans each)
        "MATCH (p:Person) WITH p ORDER BY id(p) WITH collect(p) AS people\n"
        "UNWIND range(0, size(people) - 2, 2) AS i WITH people[i] AS a, people[i + 1] AS b\n"
        "CREATE (a)-[:KNOWS {written_by: 'plans', source: 'plans', confidence: 0.5, created_at: '2026-11-29'}]->(b)"
    )
    await grown.write(links)
    nodes = statistics_cypher.node_tallies(("Organization", "Person"))
    assert nodes is not None
    relationships = Statement(statistics_cypher.RELATIONSHIP_TALLIES.text, {"types": ["KNOWS"]})
    for statement, read in ((nodes, NODES), (relationships, NODES // 2)):
        plan = await grown.plan(statement, profile=True)
        assert 0 < unwound(plan) < read // 10, plan
    [knows] = [row for row in await grown.read(relationships) if row["dimension"] == "count"]
    assert knows["count"] == NODES // 2  # every relationship was read


async def test_the_statistics_read_their_counters_not_the_graph(grown: FalkorDBBackend) -> None:
    """get_graph_stats (issue 35, item 3) folds what the writes marked since the last fold and reads the counters:
    once NODES entities are folded, a write more costs a read of one due node, and no read it sends produces
    more records than the counters and ends hold, where the full scan it replaces reads every entity."""
    registry = await GraphRegistrySource(grown).load()
    labels, types = registry.all_canonical_labels(), registry.all_relationship_types()
    assert await stat_counts.initialise(grown, labels, types)  # the walk (the gate's first fold takes it on)
    assert await stat_counts.counted(grown, labels, types) is not None  # the first: every write of the fixture
    await grown.write(Statement("MATCH (n:Person {name: 'person 00007'}) SET n.source = 'moved', n._due = 1"))
    sent: list[tuple[str, int]] = []
    original = grown.read

    async def profiled_read(statement: Statement) -> list[dict[str, Any]]:
        sent.append((statement.text.splitlines()[0], produced(await grown.plan(statement, profile=True))))
        return await original(statement)

    grown.read = profiled_read  # type: ignore[method-assign]
    try:
        kept = await stat_counts.counted(grown, labels, types)
    finally:
        grown.read = original  # type: ignore[method-assign]
    assert kept is not None
    held = len(kept.counters) + len(kept.ends)
    assert sent and max(most for _, most in sent) <= held + 2, [s for s in sent if s[1] > held + 2]
    by_source = {c["value"]: c["count"] for c in kept.counters if c["dim"] == "source" and c["part"] == "Person"}
    assert by_source == {"plans": NODES - 1, "moved": 1}
    scan = statistics_cypher.node_tallies(tuple(labels))
    assert scan is not None and produced(await grown.plan(scan, profile=True)) >= NODES  # the check can fail

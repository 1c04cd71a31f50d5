"""Every statement that bounds an indexed string answers what its predicate says, on every engine tier.

FalkorDB 4.16's range index loosens an upper bound on a string (FalkorDB #2239; core/cypher/ranges.py): one
window checked proves little, so each statement runs here on random data over many random windows (a fixed
seed), and its answer is compared with the predicate evaluated in Python on the same data. The data are what the
gate writes (time stamps to the millisecond, several changes in one millisecond ordered by `#`, records of one
change sharing its `seq`), with the indexes the migrations make. The first test shows the engine's defect itself:
the bare bound answers too much, so these comparisons can fail."""

import random
import string
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import is_bolt_tier
from write_gate.core.cypher.change_feed import KEYED_CHANGES_AFTER, changed_areas
from write_gate.core.cypher.history_reads import changes_of
from write_gate.core.cypher.idempotency import IDEMPOTENCY_LABEL
from write_gate.core.cypher.reads import page_of_labels
from write_gate.core.cypher.statement import Statement
from write_gate.core.feed_windows import SEQ_KEY, SEQ_KEY_INDEXED, SEQ_NUMBER, number_below, seq_key, seq_number
from write_gate.core.history import CHANGE_LABEL, CONFLICT_LABEL
from write_gate.core.identity import KEY_FIELD
from write_gate.engines import GraphBackend
from write_gate.services.change_feed import feed_page, newest
from write_gate.services.history import conflicts_page
from write_gate.serving.config import BackendKind, Settings
from write_gate.store.history_pruning import prune_history
from write_gate.store.idempotency_pruning import prune_idempotency

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

SEED = 20261128
WINDOWS = 40  # random windows per statement
LABELS = ("Person", "Organization", "KNOWS")


def stamp(rng: random.Random) -> str:
    """A gate's `at`: ISO-8601 UTC to the millisecond (24 characters), within ten minutes."""
    return f"2026-11-28T10:0{rng.randrange(10)}:{rng.randrange(60):02d}.{rng.randrange(1000):03d}Z"


def records(rng: random.Random, changes: int = 150, batches: int = 0) -> list[dict[str, Any]]:
    """Change records as the gate writes them: a change's records share its `seq`, `seq_k`, `at` and `change_id`;
    some changes fall in one millisecond, ordered after each other by `#` (core/cypher/change_order.py); and
    `batches` batches of 20 to 60 items share one millisecond, each item's key its place in the batch (a few of
    them `#`s after another change of their subject)."""
    out = []

    def change(at: str, seq: str, order: int) -> None:
        change_id, label = "".join(rng.choices("0123456789abcdef", k=8)), rng.choice(LABELS)
        key = f"k{rng.randrange(6)}"
        for n in range(rng.choice((1, 1, 2, 3))):
            out.append(
                {"seq": seq, "seq_n": seq_number(seq), SEQ_KEY: seq_key(seq, order), "at": at, "change_id": change_id}
                | {SEQ_KEY_INDEXED: seq_key(seq, order) + 1}
                | {"label": label, "key": key, "subject": "node"}
                | {"properties": [f"p{n}"], "op": "set"}
            )

    for _ in range(changes):
        at = stamp(rng)
        change(at, at + "#" * rng.choice((0, 0, 0, 1, 2)), 0)
    for _ in range(batches):
        at = stamp(rng)
        for i in range(rng.randrange(20, 60)):
            change(at, at + "#" * rng.choice((0,) * 9 + (1,)), i)
    return out


def near(rng: random.Random, values: list[str]) -> str:
    """A bound where loosening shows: a stored value, one cut short, or one a character past it."""
    value = rng.choice(values)
    match rng.randrange(3):
        case 0:
            return value
        case 1:
            return value[: rng.randrange(1, len(value) + 1)]
        case _:
            return value[:-1] + chr(ord(value[-1]) + 1)


def given(statement: Statement, params: dict[str, Any]) -> Statement:
    return Statement(statement.text, params)


async def create(graph: GraphBackend, label: str, rows: list[dict[str, Any]]) -> None:
    await graph.write(Statement(f"MATCH (n:{label}) DETACH DELETE n", {}))
    await graph.write(Statement(f"UNWIND $rows AS row CREATE (n:{label}) SET n += row", {"rows": rows}))


@pytest.fixture
async def history(graph: GraphBackend) -> list[dict[str, Any]]:
    beside = (SEQ_KEY_INDEXED,) if graph.dialect.two_ranges_in_one_scan else ()
    for prop in ("seq", "at", "key", SEQ_NUMBER, *beside):
        await graph.ensure_index(CHANGE_LABEL, prop)  # as migrations 0020 and 0021 make them
    rows = records(random.Random(SEED), batches=6)
    await create(graph, CHANGE_LABEL, rows)
    return rows


async def test_the_engine_itself_answers_bare_bounds_loosely(
    settings: Settings, graph: GraphBackend, history: list[dict]
) -> None:
    """The defect the statements are written around, shown on this tier: a window's bounds written once answer
    records outside it, and so does a lower bound alone."""
    rng = random.Random(SEED)
    seqs = [r["seq"] for r in history]
    windows = lower = 0
    for _ in range(WINDOWS):
        low, high = sorted((near(rng, seqs), near(rng, seqs)))
        bare = f"MATCH (h:{CHANGE_LABEL}) WHERE h.seq >= $low AND h.seq <= $high RETURN h.seq AS seq"
        rows = await graph.read(Statement(bare, {"low": low, "high": high}))
        windows += sorted(row["seq"] for row in rows) != sorted(s for s in seqs if low <= s <= high)
        rows = await graph.read(
            Statement(f"MATCH (h:{CHANGE_LABEL}) WHERE h.seq > $low RETURN h.seq AS seq", {"low": low})
        )
        lower += sorted(row["seq"] for row in rows) != sorted(s for s in seqs if s > low)
    if settings.backend is BackendKind.MEMGRAPH and not is_bolt_tier(settings):
        assert windows == lower == 0
    else:  # FalkorDB answers (the Bolt double runs every statement on it): when it is fixed, ranges.py may go
        assert windows > WINDOWS // 2 and lower > 0


Cursor = tuple[str, int, str]  # (seq, seq_k, change_id)


def place(r: dict[str, Any]) -> Cursor:
    """A record's place in the feed's order."""
    return (r["seq"], r[SEQ_KEY], r["change_id"])


def feed_expected(
    history: list[dict], labels: list[str] | None, cursor: Cursor, horizon: str, limit: int
) -> list[Cursor]:
    places = {
        place(r)
        for r in history
        if cursor[0] <= r["seq"] <= horizon and place(r) > cursor and (labels is None or r["label"] in labels)
    }
    return sorted(places)[:limit]


async def test_the_feed_answers_exactly_the_changes_in_its_window(graph: GraphBackend, history: list[dict]) -> None:
    """From random cursors (inside batches' milliseconds too, where pages read windows of keys), the changes after
    the cursor in the feed's order (`seq`, `seq_k`, `change_id`), each with all its records."""
    rng = random.Random(SEED + 1)
    seqs = [r["seq"] for r in history]
    crowded = [r for r in history if r[SEQ_KEY] % (1 << 40) > 0]
    assert len(crowded) > 100  # the check can fail: batches' milliseconds hold more than a small page's probe
    keyed = 0

    async def read(statement: Statement) -> list[dict[str, Any]]:
        nonlocal keyed
        keyed += statement.text == KEYED_CHANGES_AFTER.text
        return await graph.read(statement)

    for _ in range(WINDOWS * 2):
        seq = near(rng, seqs)
        cursor = rng.choice(
            [("", 0, ""), place(rng.choice(history)), place(rng.choice(crowded)), (seq, seq_key(seq), "")]
        )
        horizon = rng.choice([near(rng, seqs), "2026-11-28T10:59:59.999Z"])
        labels = rng.choice([None, sorted(rng.sample(LABELS, 2))])
        limit = rng.choice([1, 3, 7, 1000])
        params = {"labels": labels, "cursor": cursor, "horizon": horizon, "limit": limit}
        # Through the windows the feed plans (core/feed_windows.py): probes, shrinking and growing included.
        rows = await feed_page(read, cursor[0], cursor[2], horizon, labels, limit, cursor[1])
        want = feed_expected(history, labels, cursor, horizon, limit)
        assert [(row["seq"], row["key"], row["change_id"]) for row in rows] == want, params
        in_area = [sum(1 for r in history if place(r) == at and (not labels or r["label"] in labels)) for at in want]
        assert [len(row["records"]) for row in rows] == in_area
    assert keyed > WINDOWS // 4  # pages inside a batch's millisecond read it by its keys


async def test_the_newest_changes_come_whole(graph: GraphBackend, history: list[dict]) -> None:
    for limit in (1, 5, 40):
        rows = await newest(graph.read, None, limit, "2026-11-28T10:10:00.000Z")
        latest = sorted({place(r) for r in history})[-limit:]
        assert [(row["seq"], row["key"], row["change_id"]) for row in rows] == latest
        counts = [sum(1 for r in history if place(r) == at) for at in latest]
        assert [len(row["records"]) for row in rows] == counts


async def test_a_subjects_history_pages_by_its_cursor(graph: GraphBackend, history: list[dict]) -> None:
    rng = random.Random(SEED + 2)
    statement = changes_of(relationship=False)
    for _ in range(WINDOWS):
        label, key = rng.choice(LABELS), f"k{rng.randrange(6)}"
        mine = [r for r in history if r["label"] == label and r["key"] == key]
        cursor = rng.choice(
            [
                (None, None),
                (near(rng, [r["seq"] for r in history]), "8"),
                *[(r["seq"], r["change_id"]) for r in mine[:3]],
            ]
        )
        since = rng.choice([None, near(rng, [r["at"] for r in history])])
        params = {"label": label, "key": key, "property": None, "since": since, "limit": 1000}
        params |= {"after_seq": cursor[0], "after_id": cursor[1], "after_property": None}
        rows = await graph.read(given(statement, params))
        want = sorted(
            (
                r
                for r in mine
                if (since is None or r["at"] >= since)
                and (
                    cursor[0] is None or r["seq"] < cursor[0] or (r["seq"] == cursor[0] and r["change_id"] <= cursor[1])
                )
            ),
            key=lambda r: (r["seq"], r["change_id"]),
            reverse=True,
        )
        assert [(row["seq"], row["change_id"]) for row in rows] == [(r["seq"], r["change_id"]) for r in want], params


async def test_the_prunes_delete_exactly_the_records_before_their_cutoff(graph: GraphBackend) -> None:
    """Each prune, in small chunks, repeated until a chunk comes back short (store/history_pruning.py), on random
    records: change records (some ordered after a later-stamped change: their `seq`'s moment past their `at`),
    conflicts of every status, safe retries' records; with the indexes the migrations make."""
    for prop in ("seq", "at", "key", SEQ_NUMBER):
        await graph.ensure_index(CHANGE_LABEL, prop)
    for prop in ("status", SEQ_NUMBER):
        await graph.ensure_index(CONFLICT_LABEL, prop)
    await graph.ensure_index(IDEMPOTENCY_LABEL, SEQ_NUMBER)
    rng = random.Random(SEED + 3)
    for _ in range(WINDOWS // 4):  # each trial deletes: the records are written again for the next
        changes = records(rng, changes=60)
        for record in rng.sample(changes, 10):  # clock skew: ordered after a change stamped later
            record["seq"] = max(record["seq"], stamp(rng))
            record[SEQ_NUMBER] = seq_number(record["seq"])
        conflicts = [{"at": at, "status": rng.choice(["open", "settled", "resolved"])} for at in stamps(rng, 40)]
        claims = [{"at": at, "id": f"k{n}"} for n, at in enumerate(stamps(rng, 40))]
        await create(graph, CHANGE_LABEL, changes)
        await create(graph, CONFLICT_LABEL, [c | {SEQ_NUMBER: seq_number(c["at"])} for c in conflicts])
        await create(graph, IDEMPOTENCY_LABEL, [c | {SEQ_NUMBER: seq_number(c["at"])} for c in claims])
        cutoff = near(rng, [r["at"] for r in changes + conflicts + claims])
        chunk = rng.choice([1, 7, 1000])
        pruned = await prune_history(graph, cutoff, chunk)
        assert await prune_idempotency(graph, cutoff, chunk) == sum(c["at"] < cutoff for c in claims)
        # A change record goes when stamped before the cutoff and its `seq`'s moment is in the cutoff's window
        # (number_below: every `seq` before the cutoff as text is); a skewed one waits for a later prune.
        gone = [r for r in changes if r["at"] < cutoff and seq_number(r["seq"]) < number_below(cutoff)]
        assert pruned.changes == len(gone) and all(r in gone for r in changes if r["seq"] < cutoff), cutoff
        assert await kept(graph, CHANGE_LABEL) == sorted(r["at"] for r in changes if r not in gone), cutoff
        decided = [c for c in conflicts if c["at"] < cutoff and c["status"] != "open"]
        assert pruned.conflicts == len(decided), cutoff
        assert await kept(graph, CONFLICT_LABEL) == sorted(c["at"] for c in conflicts if c not in decided), cutoff
        assert await kept(graph, IDEMPOTENCY_LABEL) == sorted(c["at"] for c in claims if c["at"] >= cutoff), cutoff


def stamps(rng: random.Random, n: int) -> list[str]:
    return [stamp(rng) for _ in range(n)]


async def kept(graph: GraphBackend, label: str) -> list[str]:
    return sorted(row["at"] for row in await graph.read(Statement(f"MATCH (h:{label}) RETURN h.at AS at", {})))


async def test_conflicts_page_by_their_cursor(graph: GraphBackend) -> None:
    """Through the window search a page runs (core/feed_windows.py), limits small and large, from no cursor and
    from random ones, with and without a filter."""
    for prop in ("status", "conflict_id", SEQ_NUMBER):
        await graph.ensure_index(CONFLICT_LABEL, prop)
    rng = random.Random(SEED + 4)
    conflicts = [
        {"at": stamp(rng), "conflict_id": "".join(rng.choices("0123456789abcdef", k=6))}
        | {"status": rng.choice(["open", "open", "resolved"])}
        for _ in range(200)
    ]
    await create(graph, CONFLICT_LABEL, [c | {SEQ_NUMBER: seq_number(c["at"])} for c in conflicts])
    ids = [c["conflict_id"] for c in conflicts]
    for _ in range(WINDOWS):
        chosen = rng.choice(conflicts)
        after_at, after_id = rng.choice(
            [(chosen["at"], near(rng, ids)), (chosen["at"], chosen["conflict_id"]), (None, None)]
        )
        status, limit = rng.choice([None, "open"]), rng.choice([1, 7, 1000])
        filters = {"status": status, "label": None, "property": None}
        rows = await conflicts_page(graph.read, filters, after_at, after_id, limit)
        want = sorted(
            (
                c
                for c in conflicts
                if (after_at is None or c["at"] < after_at or (c["at"] == after_at and c["conflict_id"] < after_id))
                and status in (None, c["status"])
            ),
            key=lambda c: (c["at"], c["conflict_id"]),
            reverse=True,
        )[:limit]
        assert [row["conflict_id"] for row in rows] == [c["conflict_id"] for c in want], (after_at, after_id, limit)


async def test_a_page_of_nodes_starts_exactly_after_its_cursor(graph: GraphBackend) -> None:
    await graph.ensure_unique("Person", KEY_FIELD)
    rng = random.Random(SEED + 5)
    keys = sorted({"".join(rng.choices(string.ascii_lowercase[:6], k=rng.randrange(1, 6))) for _ in range(300)})
    await create(graph, "Person", [{KEY_FIELD: key} for key in keys])
    statement = page_of_labels(("Person",), searching=False)
    assert statement is not None
    for _ in range(WINDOWS):
        after, limit = rng.choice(["", near(rng, keys)]), rng.choice([1, 10, 1000])
        rows = await graph.read(given(statement, {"after": after, "limit": limit}))
        assert [row["key"] for row in rows] == [k for k in keys if k > after][:limit], after


async def test_the_watchers_poll_answers_from_its_time_on(graph: GraphBackend, history: list[dict]) -> None:
    rng = random.Random(SEED + 6)
    check: Callable[[str], list[tuple[str, str, str]]] = lambda since: sorted(  # noqa: E731
        {(r["at"], r["change_id"], r["label"]) for r in history if r["at"] >= since}
    )
    for _ in range(WINDOWS):
        since = near(rng, [r["at"] for r in history])
        rows = await graph.read(changed_areas(since, 10_000))
        assert [(row["at"], row["change_id"], row["label"]) for row in rows] == check(since)

"""The statistics the writes keep, folded and read (core/stat_counts.py says how they work).

`fold` takes every due subject and every drop into the counters, a chunk a statement; `counted` folds, then
answers the counters as the tally rows the full scan gave, computing again the few extremes a departure made
unknown. A graph written before the writes kept counts is walked once (`initialise`, resumable, a bounded number
of pages a call); until the walk is over, `counted` answers None and the caller scans as before.
"""

import functools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from write_gate.core import stat_counts as pure
from write_gate.core.cypher import stat_counts as cypher
from write_gate.core.cypher.statement import Statement
from write_gate.core.stat_counts import NODE, RELATIONSHIP
from write_gate.engines import GraphBackend

logger = logging.getLogger(__name__)

CHUNK = 500
MARK_PAGE = 2_000
# Pages of the first walk a read takes on (the served gate's keeper walks the rest): a young graph is walked by its
# first read, an old one bit by bit, scanned until it is over.
PAGES_A_READ = 3
# A chunk whose subjects a write changed between its read and its fold is read again; past this many tries in a
# row the fold stops for now (the subjects stay due: the next fold takes them).
TRIES = 5
# Chunks a read folds at most (4,000 subjects, about 2 s here): the keeper folds the writes every few seconds, so a
# read finds a few chunks at most, but after a bulk import (or with the keeper off) the backlog is the import's
# size, and a read that folded it all would cost it all. Past this, the answer says its counts are behind.
CHUNKS_A_READ = 8


@dataclass
class Counted:
    counters: list[dict[str, Any]]
    ends: list[dict[str, Any]]
    behind: bool = False  # due subjects were left for the keeper: the counts leave out their last writes


@dataclass
class Budget:
    """How many chunks a fold may still apply (None: no limit), and whether it stopped with some left."""

    chunks: int | None = None
    cut: bool = False

    @property
    def spent(self) -> bool:
        return self.chunks is not None and self.chunks <= 0

    def take(self) -> None:
        if self.chunks is not None:
            self.chunks -= 1


def _items(kind: str, part: str, rows: list[dict[str, Any]]) -> tuple[dict[str, Any], pure.Fold]:
    """A chunk of due subjects: the fold statement's `items`, and their change."""
    fold = pure.Fold()
    items = []
    for row in rows:
        new = pure.stat_of(kind, {**row, "part": part})
        fold.change(pure.decoded(row["old"]), new)
        item = {"id": row["id"], "sig": row["sig"], "stat": pure.encoded(new) or ""}
        if kind == RELATIONSHIP:
            item["start"] = row["start"]
        items.append(item)
    return {"items": items}, fold


def _drops(rows: list[dict[str, Any]]) -> tuple[dict[str, Any], pure.Fold]:
    """A chunk of drops: the fold statement's `ids`, and their change (each subject gone)."""
    fold = pure.Fold()
    for row in rows:
        fold.change(pure.decoded(row["old"]), None)
    return {"ids": [row["id"] for row in rows]}, fold


Chunk = Callable[[list[dict[str, Any]]], tuple[dict[str, Any], pure.Fold]]


async def _fold_chunks(
    backend: GraphBackend, read: Statement, apply: Statement, chunk: Chunk, what: str, budget: Budget
) -> int:
    """Chunk after chunk read and applied, until the read finds none left or the budget is spent (then whether one
    is left, a read of one row, says whether the fold was cut); a chunk a write changed between the two is read
    again, up to TRIES times in a row."""
    folded = tries = 0
    while True:
        if budget.spent:
            budget.cut = budget.cut or bool(await backend.read(Statement(read.text, {"chunk": 1})))
            break
        rows = await backend.read(Statement(read.text, {"chunk": CHUNK}))
        if not rows:
            break
        budget.take()
        params, fold = chunk(rows)
        [answer] = await backend.write(
            Statement(apply.text, {**params, "deltas": fold.delta_params(), "ends": fold.end_params()})
        )
        if answer["whole"]:
            folded, tries = folded + len(rows), 0
            if len(rows) < CHUNK:
                break
        elif (tries := tries + 1) >= TRIES:
            logger.info("statistics: %s kept changing under the fold; left for the next one", what)
            break
    return folded


async def fold(backend: GraphBackend, labels: Sequence[str], types: Sequence[str], budget: Budget | None = None) -> int:
    """Every due subject of the labels and types, and every drop, into the counters (as many chunks as `budget`
    allows; `budget.cut` then says whether some were left); how many."""
    budget = budget if budget is not None else Budget()
    done = await _fold_chunks(backend, cypher.DROPS, cypher.FOLD_DROPS, _drops, "the drops", budget)
    for label in labels:
        items = functools.partial(_items, NODE, label)
        done += await _fold_chunks(backend, cypher.due_nodes(label), cypher.FOLD_NODES, items, label, budget)
    for type_ in types:
        items = functools.partial(_items, RELATIONSHIP, type_)
        due = cypher.due_relationships(type_)
        done += await _fold_chunks(backend, due, cypher.FOLD_RELATIONSHIPS, items, type_, budget)
    return done


async def initialise(
    backend: GraphBackend, labels: Sequence[str], types: Sequence[str], pages: int | None = None
) -> bool:
    """The walk that makes a graph's every subject due once, `pages` pages at most (None: to its end), from
    where it was left; whether it is over."""
    rows = await backend.read(cypher.READY)
    if rows and rows[0]["ready"] is True:
        return True
    cursor = rows[0]["cursor"] if rows and rows[0]["cursor"] is not None else -1
    if cursor == -1:  # a graph whose registry was loaded before the fold had its index
        for label in labels:
            await backend.ensure_index(label, pure.DUE)
        for type_ in types:
            await backend.ensure_index(type_, pure.DUE, relationship=True)
    walked = 0
    while pages is None or walked < pages:
        params = {"cursor": cursor, "limit": MARK_PAGE, "labels": list(labels), "types": list(types)}
        [row] = await backend.write(Statement(cypher.MARK_DUE.text, params))
        # Over at a page short of the limit: every node left was in it, and a node made since was made by a write
        # that marked it due itself. (Waiting for an empty page instead chased a graph being written to for as
        # long as the writes went on, two more write statements for every few writes.)
        over = row["walked"] < MARK_PAGE
        await backend.write(Statement(cypher.WALKED.text, {"cursor": row["last"], "ready": over}))
        if over:
            logger.info("statistics: every subject is counted from now on")
            return True
        cursor, walked = row["last"], walked + 1
    return False


async def forget(backend: GraphBackend) -> None:
    """Every counter, end, drop and the walk's place gone (a restore's end): the next fold walks the graph."""
    for label in pure.STAT_LABELS:
        await backend.write(cypher.forget(label))


async def _exact_extremes(backend: GraphBackend, counters: list[dict[str, Any]]) -> None:
    for c in counters:
        # One of no values stays stale (nobody reads its extremes) until values arrive.
        if not c["stale"] or c["dim"] != "confidence" or not c["count"]:
            continue
        statement = cypher.bucket_extremes(c["part"], relationship=c["kind"] == RELATIONSHIP)
        [row] = await backend.read(Statement(statement.text, {"bucket": c["value"]}))
        if row["low"] is None:
            continue  # its values changed since the fold (due again): a later read computes them
        await backend.write(Statement(cypher.SET_EXTREMES.text, {"k": c["k"], **row}))
        c.update(low=row["low"], high=row["high"], stale=False)


async def _exact_ends(backend: GraphBackend, ends: list[dict[str, Any]]) -> None:
    for e in ends:
        if not e["stale"]:
            continue
        rows = await backend.read(cypher.label_end(e["part"], newest=e["end"] == "newest"))
        if not rows:  # no dated entity of the label: no end, and stale until one arrives
            e.update(at=None)
            continue
        await backend.write(Statement(cypher.SET_END.text, {"k": e["k"], **rows[0]}))
        e.update(**rows[0], stale=False)


async def counted(backend: GraphBackend, labels: Sequence[str], types: Sequence[str]) -> Counted | None:
    """The counters and ends, the due subjects folded first (`CHUNKS_A_READ` chunks at most: `behind` says whether
    some were left); None while the graph's first walk is not over."""
    if not await initialise(backend, labels, types, pages=PAGES_A_READ):
        return None
    budget = Budget(CHUNKS_A_READ)
    await fold(backend, labels, types, budget)
    counters = await backend.read(cypher.COUNTERS)
    ends = await backend.read(cypher.ENDS)
    await _exact_extremes(backend, counters)
    await _exact_ends(backend, ends)
    return Counted(counters, ends, behind=budget.cut)

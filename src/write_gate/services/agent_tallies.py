"""Each agent's write tallies, folded and read (core/agent_tallies.py says how they work).

`fold` takes the change records and conflicts settled since the last fold into the `:_AgentTally` nodes, a page of
each a statement; `current` folds (a bounded number of pages), then answers the tallies with what is newer than
the fold's horizon counted afresh. A history the folds have not caught up with (a graph older than the tallies,
with no keeper folding it) answers None: the caller counts the old way until it is caught up.
"""

import logging
from dataclasses import dataclass

from write_gate.core import agent_tallies as pure
from write_gate.core.agent_tallies import Cursors, Tallies
from write_gate.core.change_feed import horizon
from write_gate.core.clock import utc_now
from write_gate.core.cypher import agent_tallies as cypher
from write_gate.core.cypher.change_feed import WINDOW_PROBE
from write_gate.core.cypher.history_reads import CONFLICT_PROBE
from write_gate.core.cypher.statement import Statement
from write_gate.core.feed_windows import Window, after_cursor, seq_number
from write_gate.engines import GraphBackend
from write_gate.services.windowed import Read, window_rows
from write_gate.services.writes_in_flight import WritesInFlight

logger = logging.getLogger(__name__)

PAGE = 500  # changes (and conflicts) a page takes
# Pages a read folds before it answers (a served gate's keeper folds the rest): a history older than the tallies
# is folded bit by bit, counted the old way until it is done.
PAGES_A_READ = 4
_NO_FILTER = {"status": None, "label": None, "property": None}


def _change_probe(stretch: Window, cap: int) -> Statement:
    return Statement(WINDOW_PROBE.text, {"low": stretch.low, "high": stretch.high, "labels": None, "cap": cap})


def _conflict_probe(stretch: Window, cap: int) -> Statement:
    return Statement(CONFLICT_PROBE.text, {**_NO_FILTER, "low": stretch.low, "high": stretch.high, "cap": cap})


@dataclass
class Page:
    """What one page of each kind adds, where it leaves the cursors, and whether both kinds are read to the end."""

    tallies: Tallies
    to: Cursors
    done: bool


# A kind's page: what it adds, where it leaves that kind's cursor (its stamp and id), whether it read to the end.
KindPage = tuple[Tallies, tuple[str, str], bool]


async def _changes(read: Read, at: Cursors, until: str) -> KindPage:
    def page(window: Window) -> Statement:
        params = {"after_seq": at.seq, "after_id": at.change_id, "horizon": until, "limit": PAGE}
        return Statement(cypher.CHANGES.text, {**params, "low": window.low, "high": window.high})

    rows = await window_rows(read, after_cursor(at.seq, until), _change_probe, page, PAGE)
    if not rows:
        return {}, (at.seq, at.change_id), True
    lookup = {"pairs": [{"at": at_, "id": id_} for at_, id_ in sorted({(r["at"], r["change_id"]) for r in rows})]}
    firsts = {r["change_id"]: r["first"] for r in await read(Statement(cypher.FIRST_SEQS.text, lookup))}
    last = rows[-1]
    return pure.changes_counted(rows, firsts), (last["seq"], last["change_id"]), len(rows) < PAGE


async def _held(read: Read, at: Cursors, until: str) -> KindPage:
    def page(window: Window) -> Statement:
        params = {"after_at": at.at, "after_id": at.conflict_id, "horizon": until, "limit": PAGE}
        return Statement(cypher.CONFLICTS.text, {**params, "low": window.low, "high": window.high})

    rows = await window_rows(read, after_cursor(at.at, until), _conflict_probe, page, PAGE)
    if not rows:
        return {}, (at.at, at.conflict_id), True
    held = sorted({(r["at"], r["change_id"]) for r in rows})
    lookup = {"writes": [{"at": at_, "n": seq_number(at_), "id": id_} for at_, id_ in held]}
    writes = {r["change_id"]: r for r in await read(Statement(cypher.HELD_WRITES.text, lookup))}
    last = rows[-1]
    return pure.held_counted(rows, writes), (last["at"], last["conflict_id"]), len(rows) < PAGE


async def tally_page(read: Read, at: Cursors, until: str) -> Page:
    """One page of changes and one of conflicts after `at`, stamped up to `until`."""
    written, after_changes, changes_done = await _changes(read, at, until)
    held, after_held, held_done = await _held(read, at, until)
    return Page(pure.merged(written, held), Cursors(*after_changes, *after_held), changes_done and held_done)


async def _cursors(backend: GraphBackend) -> Cursors:
    return Cursors.of(await backend.read(cypher.CURSORS))


async def fold(
    backend: GraphBackend, settle_seconds: float, pages: int | None = None, in_flight: WritesInFlight | None = None
) -> bool:
    """What settled since the last fold (the change feed's horizon: `settle_seconds` before now, and before the
    oldest write `in_flight`), `pages` pages at most (None: all); whether the tallies are caught up."""
    until = horizon(utc_now(), settle_seconds, in_flight.oldest() if in_flight is not None else None)
    taken = 0
    while pages is None or taken < pages:
        at = await _cursors(backend)
        page = await tally_page(backend.read, at, until)
        to = page.to.through(until) if page.done else page.to
        taken += 1
        if to != at:
            params = {"read_from": at.params(), "moved_to": to.params(), "tallies": pure.as_params(page.tallies)}
            [row] = await backend.write(Statement(cypher.APPLY.text, params))
            if not row["applied"]:
                # Another fold took the page first, perhaps up to an earlier horizon (a keeper's, computed before
                # this one's): go on from where it left the cursors. Answering caught up here left what lay
                # between the two horizons out of the tallies until the next fold.
                logger.debug("agent tallies: a page was folded elsewhere first")
                continue
        if page.done:
            return True
    return False


async def current(
    backend: GraphBackend, settle_seconds: float, pages: int | None = None, in_flight: WritesInFlight | None = None
) -> Tallies | None:
    """Each agent's tallies up to now: those kept, after a fold of `pages` pages at most (None: PAGES_A_READ),
    and what is newer than the fold's horizon counted for this read; None where the fold is behind by more."""
    pages = PAGES_A_READ if pages is None else pages
    if not await fold(backend, settle_seconds, pages, in_flight):
        return None
    [row] = await backend.read(cypher.TALLIES)
    at, kept = Cursors.of([row]), pure.stored(row["tallies"])
    until, newer = utc_now(), []
    for _ in range(pages):
        page = await tally_page(backend.read, at, until)
        newer.append(page.tallies)
        if page.done:
            return pure.merged(kept, *newer)
        at = page.to
    return None

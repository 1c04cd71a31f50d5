"""Each agent's writes, kept as tallies (issue 35, item 3): the console's agents page without a scan of the history.

A write answered written leaves change records (one `change_id`, which its records share with their `at` and
agent) or, where it only held a value beside the current one (keep_both), conflict records alone. The page shows
per agent how many such writes there were and when the last was. A fold takes the change feed and the conflicts
in oldest first, from where the last fold stopped, a bounded page at a time (a window of the `seq_n` index each),
and adds each page's counts to one `:_AgentTally` per agent in the statement that moves the stored cursors, only
if they are still the ones the page was read from: two gates folding at once never count a page twice.

Counted once:
- A change's records may carry several `seq`s (a subject whose last change sorts later gets its own:
  core/cypher/change_order.py), so a change is counted at its first `seq`, found among all its records by `at`.
- A held write is counted at its first conflict, and only if it left no change record (a write that changed a
  value too is counted by its change).

A fold stops `settle` seconds before now, as the feed does (core/change_feed.py): a write stamped earlier may
commit later. What is newer is counted afresh for each read and not kept. The tallies count every write since
the graph's history was first tallied; a retention prune does not take writes back out.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from write_gate.core.decay import parse_at

# An id after every change's and conflict's (their ids are hex): a cursor (`until`, AFTER_EVERY_ID) stands past
# everything stamped up to `until`.
AFTER_EVERY_ID = "~"
# An idle fold moves its cursors up to its horizon once they are this far behind (a write of the cursors a minute
# at most), so a window search from them stays short.
IDLE_MOVE = timedelta(minutes=1)


@dataclass
class Tally:
    writes: int = 0  # writes that left change records
    held: int = 0  # writes that only held a value beside the current one
    last_at: str | None = None

    def add(self, other: "Tally") -> None:
        self.writes += other.writes
        self.held += other.held
        if other.last_at is not None and (self.last_at is None or other.last_at > self.last_at):
            self.last_at = other.last_at


Tallies = dict[str, Tally]


def _count(tallies: Tallies, agent: Any, at: Any, writes: int = 0, held: int = 0) -> None:
    if not isinstance(agent, str) or not agent:  # a record with no agent (written around the gate): nobody's
        return
    tallies.setdefault(agent, Tally()).add(Tally(writes, held, at if isinstance(at, str) else None))


def changes_counted(rows: Iterable[Mapping[str, Any]], firsts: Mapping[str, Any]) -> Tallies:
    """A page of changes (`seq`, `change_id`, `at`, `agent`) as tallies: each change at its first `seq`
    (`firsts`: change id to the least `seq` of all its records)."""
    tallies: Tallies = {}
    for row in rows:
        if firsts.get(row["change_id"]) == row["seq"]:
            _count(tallies, row["agent"], row["at"], writes=1)
    return tallies


def held_counted(rows: Iterable[Mapping[str, Any]], writes: Mapping[str, Mapping[str, Any]]) -> Tallies:
    """A page of conflicts (`at`, `conflict_id`, `change_id`, `agent`) as tallies: each write that left no change
    record, at its first conflict (`writes`: change id to `recorded`, whether it left any, and `first`)."""
    tallies: Tallies = {}
    for row in rows:
        write = writes.get(row["change_id"])
        if write is not None and not write["recorded"] and write["first"] == row["conflict_id"]:
            _count(tallies, row["agent"], row["at"], held=1)
    return tallies


def merged(*parts: Mapping[str, Tally]) -> Tallies:
    total: Tallies = {}
    for part in parts:
        for agent, tally in part.items():
            total.setdefault(agent, Tally()).add(tally)
    return total


def stored(rows: Iterable[Mapping[str, Any]]) -> Tallies:
    """The `:_AgentTally` nodes as tallies (a row of nulls: there is none)."""
    return {row["agent"]: Tally(row["writes"] or 0, row["held"] or 0, row["last_at"]) for row in rows if row["agent"]}


def as_params(tallies: Mapping[str, Tally]) -> list[dict[str, Any]]:
    return [
        {"agent": agent, "writes": t.writes, "held": t.held, "last_at": t.last_at}
        for agent, t in sorted(tallies.items())
    ]


@dataclass(frozen=True)
class Cursors:
    """Where a fold stands: the last change (feed order) and the last conflict taken in; "" before every one."""

    seq: str = ""
    change_id: str = ""
    at: str = ""
    conflict_id: str = ""

    @staticmethod
    def of(rows: list[dict[str, Any]]) -> "Cursors":
        if not rows:
            return Cursors()
        row = rows[0]
        return Cursors(*(row[k] or "" for k in ("seq", "change_id", "at", "conflict_id")))

    def through(self, until: str) -> "Cursors":
        """Where a fold that read everything stamped up to `until` leaves the cursors: past `until` where they stand
        at a change or conflict read (which may sit in a millisecond a batch filled: a window starting there reads
        it whole, each time) or lag by IDLE_MOVE; else where they were. Never back (another gate's clock may be
        ahead)."""

        def moved(cursor: str, last: str) -> bool:
            if not until > cursor:
                return False
            return last != AFTER_EVERY_ID or parse_at(until) - parse_at(cursor[:24]) >= IDLE_MOVE

        changes = (until, AFTER_EVERY_ID) if moved(self.seq, self.change_id) else (self.seq, self.change_id)
        conflicts = (until, AFTER_EVERY_ID) if moved(self.at, self.conflict_id) else (self.at, self.conflict_id)
        return Cursors(*changes, *conflicts)

    def params(self) -> dict[str, str]:
        return {"seq": self.seq, "change_id": self.change_id, "at": self.at, "conflict_id": self.conflict_id}

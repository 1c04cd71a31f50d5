"""The agent tallies' pure part (core/agent_tallies.py): whatever pages a history is cut into, counting each change
at its first `seq` and each held write at its first conflict gives each agent's distinct writes and last one."""

from hypothesis import given
from hypothesis import strategies as st

from write_gate.core.agent_tallies import (
    AFTER_EVERY_ID,
    Cursors,
    Tally,
    changes_counted,
    held_counted,
    merged,
    stored,
)

AGENTS = st.sampled_from(["a", "b", None])
# A change: its agent, its `at` (0-9), and how many `seq`s its records hold (a subject that sorts later gets its own).
CHANGES = st.lists(st.tuples(AGENTS, st.integers(0, 9), st.integers(1, 3)), max_size=30)


def _at(i: int) -> str:
    return f"2026-11-29T10:00:00.{i:03d}Z"


@given(CHANGES, st.lists(st.integers(1, 5), min_size=1))
def test_a_change_counts_once_however_the_pages_cut_its_records(changes: list, cuts: list[int]) -> None:
    rows = []
    for n, (agent, at, seqs) in enumerate(changes):
        rows += [
            {"seq": _at(at) + "#" * k, "change_id": f"c{n:02d}", "at": _at(at), "agent": agent} for k in range(seqs)
        ]
    rows.sort(key=lambda r: (r["seq"], r["change_id"]))
    firsts = {}
    for row in rows:
        firsts.setdefault(row["change_id"], row["seq"])
    pages, start = [], 0
    while start < len(rows):  # pages of varying sizes, ending anywhere
        size = cuts[len(pages) % len(cuts)]
        pages.append(changes_counted(rows[start : start + size], firsts))
        start += size
    total = merged(*pages)
    for agent in ("a", "b"):
        mine = [(n, at) for n, (who, at, _) in enumerate(changes) if who == agent]
        expected = Tally(len(mine), 0, max((_at(at) for _, at in mine), default=None)) if mine else None
        assert total.get(agent) == expected
    assert None not in total  # a record with no agent is nobody's


def test_a_held_write_counts_at_its_first_conflict_and_only_where_it_left_no_change() -> None:
    rows = [
        {"at": _at(1), "conflict_id": "k1", "change_id": "held", "agent": "a"},
        {"at": _at(1), "conflict_id": "k2", "change_id": "held", "agent": "a"},  # two values held by one write
        {"at": _at(2), "conflict_id": "k3", "change_id": "changed", "agent": "a"},  # counted by its change
        {"at": _at(3), "conflict_id": "k4", "change_id": "gone", "agent": "b"},  # its lookup found nothing
    ]
    writes = {"held": {"recorded": False, "first": "k1"}, "changed": {"recorded": True, "first": "k3"}}
    assert held_counted(rows, writes) == {"a": Tally(0, 1, _at(1))}
    assert held_counted(rows[1:], writes) == {}  # its first conflict was on an earlier page


def test_the_stored_tallies_and_cursors_read_back() -> None:
    assert stored([{"agent": None, "writes": None, "held": None, "last_at": None}]) == {}  # no tally yet
    assert stored([{"agent": "a", "writes": 2, "held": 1, "last_at": _at(1)}]) == {"a": Tally(2, 1, _at(1))}
    assert (
        Cursors.of([]) == Cursors() == Cursors.of([{"seq": None, "change_id": None, "at": None, "conflict_id": None}])
    )


def test_a_fold_that_read_everything_leaves_its_cursors_at_its_horizon() -> None:
    """At a change read (perhaps in a millisecond a batch filled) they move up to the horizon, past every id; at
    the horizon already they stay, until it is a minute ahead; never back."""
    until = _at(500)
    at_rows = Cursors(_at(1), "c1", _at(2), "k2")
    assert at_rows.through(until) == Cursors(until, AFTER_EVERY_ID, until, AFTER_EVERY_ID)
    settled = Cursors(_at(1), AFTER_EVERY_ID, "", "")
    assert settled.through(until) == Cursors(_at(1), AFTER_EVERY_ID, until, AFTER_EVERY_ID)  # "" is no place
    assert settled.through("2026-11-29T10:01:00.001Z").seq == "2026-11-29T10:01:00.001Z"  # a minute on
    ahead = Cursors("2026-11-29T11:00:00.000Z", "c9", "2026-11-29T11:00:00.000Z", "k9")
    assert ahead.through(until) == ahead  # another gate's clock ahead of this one's

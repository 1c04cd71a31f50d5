"""The statistics' fold (core/stat_counts.py), pure: whatever subjects come, change and go, chunk by chunk,
the counters the deltas build equal a count made afresh of what the subjects are now (the engine's part, the
extremes, is held by tests/e2e/test_stats_exactness.py)."""

from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from write_gate.core import stat_counts as pure
from write_gate.core.statistics import nanos

_ROWS = st.fixed_dictionaries(
    {
        "entity": st.booleans(),
        "labels": st.lists(st.sampled_from(["Person", "Organization"]), min_size=1, max_size=2, unique=True),
        "agent": st.sampled_from([None, "a", "b", 7]),
        "source": st.sampled_from([None, "wiki", "crm"]),
        "confidence": st.one_of(st.none(), st.floats(-0.5, 1.5), st.sampled_from([0.0, 0.1, 0.9, 1.0])),
        "created": st.sampled_from([None, "2026-11-28T10:00:00.000Z", "2026-11-29T10:00:00.000Z"]),
        "updated": st.sampled_from([None, "2026-11-29T11:00:00.000Z"]),
        "archived": st.booleans(),
        "key": st.just("k"),
        "name": st.just("n"),
    }
)


def _count(stats: list[dict[str, Any]]) -> Counter[tuple[str, str, Any]]:
    """Each counter's count and total, counted afresh."""
    out: Counter[tuple[str, str, Any]] = Counter()
    fold = pure.Fold()
    for stat in stats:
        fold.change(None, stat)
    for d in fold.deltas.values():
        out[(d.part, d.dimension, repr(d.value))] += d.count
        out[(d.part, d.dimension + "#total", repr(d.value))] += d.total
    return +out


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.one_of(st.none(), _ROWS)), max_size=40), st.integers(1, 7))
def test_the_folded_counters_equal_a_fresh_count(changes: list[tuple[int, Any]], chunk: int) -> None:
    held: dict[int, dict[str, Any] | None] = {}  # subject -> what it was last counted as
    counters: Counter[tuple[str, str, Any]] = Counter()
    for start in range(0, len(changes), chunk):
        fold = pure.Fold()
        for subject, row in changes[start : start + chunk]:
            new = None if row is None else pure.stat_of(pure.NODE, {**row, "part": None})
            fold.change(held.get(subject), new)
            held[subject] = new
        for d in fold.deltas.values():
            counters[(d.part, d.dimension, repr(d.value))] += d.count
            counters[(d.part, d.dimension + "#total", repr(d.value))] += d.total
    assert +counters == _count([s for s in held.values() if s is not None])


def test_a_stat_round_trips_and_a_confidence_counts_in_billionths() -> None:
    row = {"entity": True, "labels": ["Person"], "agent": "a", "source": None, "confidence": 0.675}
    stat = pure.stat_of(
        pure.NODE,
        {
            **row,
            "created": None,
            "updated": "2026-11-29T11:00:00.000Z",
            "archived": False,
            "key": "k",
            "name": None,
            "part": None,
        },
    )
    assert stat is not None and pure.decoded(pure.encoded(stat)) == stat
    assert pure.decoded("") is None and pure.decoded("not json") is None
    fold = pure.Fold()
    fold.change(None, stat)
    [bucket] = [d for d in fold.deltas.values() if d.dimension == "confidence"]
    assert (bucket.value, bucket.total, bucket.low, bucket.low_n) == (6, nanos(0.675), 0.675, 1)
    assert pure.stat_of(pure.NODE, {**row, "entity": False}) is None  # an alias counts as nothing

"""Statistics assembled from the engine's aggregate rows (`core.cypher.statistics`): pure.

A tally row is one label's (or type's) count of one value of one dimension; summing across labels gives the
graph's. The confidence buckets are ten, `0.0-0.1` to `0.9-1.0` (a bucket holds its lower bound; 1.0 is in
the last).
"""

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

BUCKETS = 10
# Confidences are summed as whole billionths (each rounded half up): a sum of integers is the same in any order,
# where a sum of floats differs in its last bits with the order the engine or the counters added them.
NANOS = 1_000_000_000


def nanos(confidence: float) -> int:
    """What the engine's `nanos` sums for a confidence: its billionths, rounded half up."""
    return math.floor(confidence * NANOS + 0.5)


def bucket_ranges() -> list[str]:
    return [f"{i / BUCKETS:.1f}-{(i + 1) / BUCKETS:.1f}" for i in range(BUCKETS)]


def bucket_of(confidence: float) -> int:
    """What the engine computes (`confidence_bucket`), for tests and for anyone bucketing in Python."""
    if confidence >= 1:
        return BUCKETS - 1
    if confidence <= 0:
        return 0
    return int(confidence * BUCKETS)


@dataclass
class Confidence:
    buckets: list[int] = field(default_factory=lambda: [0] * BUCKETS)
    low: float | None = None
    high: float | None = None
    total: int = 0  # in billionths
    rated: int = 0

    @property
    def mean(self) -> float | None:
        return self.total / NANOS / self.rated if self.rated else None

    def add(self, bucket: int, count: int, low: float, high: float, total: int) -> None:
        self.buckets[bucket] += count
        self.low = low if self.low is None else min(self.low, low)
        self.high = high if self.high is None else max(self.high, high)
        self.total += total
        self.rated += count


@dataclass
class Tally:
    """One kind's (entities' or relations') statistics, summed over its labels or types."""

    per_name: dict[str, int] = field(default_factory=dict)
    by_agent: dict[str, int] = field(default_factory=dict)
    by_source: dict[str, int] = field(default_factory=dict)
    by_day: dict[str, int] = field(default_factory=dict)
    archived: int = 0
    confidence: Confidence = field(default_factory=Confidence)

    @property
    def total(self) -> int:
        return sum(self.per_name.values())


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def tally(rows: Iterable[Mapping[str, Any]], counted_by: str, names: Sequence[str] = ()) -> Tally:
    """Rows of `node_tallies` (`counted_by='archived'`; `names`: the labels in the order the statement was built
    with, which its `part` column indexes) or `RELATIONSHIP_TALLIES` (`'count'`; each row names its type). A
    value that is not text (a damaged `written_by`, say) is counted under its text; null under none."""
    out = Tally()
    dimensions = {"agent": out.by_agent, "source": out.by_source, "day": out.by_day}
    for row in rows:
        dimension, value, count = row["dimension"], row["value"], row["count"]
        if dimension == counted_by:
            name = row["name"] if "name" in row else names[row["part"]]
            out.per_name[name] = out.per_name.get(name, 0) + count
            if dimension == "archived" and value is True:
                out.archived += count
        elif dimension == "confidence":
            if _number(value) and all(_number(row[k]) for k in ("low", "high", "total")):
                out.confidence.add(int(value), count, row["low"], row["high"], row["total"])
        elif dimension in dimensions and value is not None:
            counts = dimensions[dimension]
            counts[str(value)] = counts.get(str(value), 0) + count
    return out


def growth(entities: Mapping[str, int], relations: Mapping[str, int]) -> list[dict[str, Any]]:
    """Per day (oldest first): entities and relations first written that day."""
    days = sorted(set(entities) | set(relations))
    return [{"date": day, "entities": entities.get(day, 0), "relations": relations.get(day, 0)} for day in days]


def extremes(rows: Iterable[Mapping[str, Any]], labels: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Rows of `oldest_and_newest` -> {'oldest': row, 'newest': row} across labels (ties broken by `_key`, as
    within a label), each row with its `label`."""
    picked: dict[str, dict[str, Any]] = {}
    for row in rows:
        end = row["end"]
        candidate = {**row, "label": labels[row["part"]]}
        current = picked.get(end)
        rank = (candidate["at"], candidate["key"] or "")
        if current is None or (rank < (current["at"], current["key"] or "")) == (end == "oldest"):
            picked[end] = candidate
    return picked

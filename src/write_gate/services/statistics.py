"""`get_graph_stats` (and the `write-gate://stats` resource): the graph's counts, computed by the engine in four
aggregate reads, over the registry's labels and types only (system nodes and aliases are not entities)."""

from typing import Any

from pydantic import BaseModel, Field

from write_gate.core import stat_counts as counters
from write_gate.core import statistics as pure
from write_gate.core.cypher import statistics as cypher
from write_gate.core.cypher.statement import Statement
from write_gate.core.identity import KEY_FIELD
from write_gate.engines import BackendError, BackendUnavailable
from write_gate.engines.errors import engine_failure
from write_gate.services import stat_counts
from write_gate.services.gate import Gate
from write_gate.services.reads import display_name

# Which time the growth counts by: the first-written time the gate stamps once on every node and relationship
# (`created_at`); `last_updated` for those written before it kept one.
GROWTH_BY = "created_at"


class Dated(BaseModel):
    name: str | None
    entityType: str  # noqa: N815 - memory-mcp's field names
    date: str


class ConfidenceBucket(BaseModel):
    range: str
    count: int


class ConfidenceStats(BaseModel):
    buckets: list[ConfidenceBucket]
    min: float | None = None
    mean: float | None = None
    max: float | None = None


class DayGrowth(BaseModel):
    date: str
    entities: int
    relations: int


# Every answer has every field; only the totals are required, so the output schema stays short. Every read hides
# archived entities, and memory-mcp's `totalEntities` counts every entity held, so the answer names both halves:
# totalEntities = activeEntities (what reads show) + archivedEntities. The breakdowns count what totalEntities does.
class GraphStats(BaseModel):
    totalEntities: int  # noqa: N815
    totalRelations: int  # noqa: N815
    activeEntities: int = 0  # noqa: N815 - not archived: the entities every read shows
    entityTypesCounts: dict[str, int] = Field(default_factory=dict)  # noqa: N815
    relationTypesCounts: dict[str, int] = Field(default_factory=dict)  # noqa: N815
    oldestEntity: Dated | None = None  # noqa: N815 - by last_updated
    newestEntity: Dated | None = None  # noqa: N815
    entitiesByAgent: dict[str, int] = Field(default_factory=dict)  # noqa: N815 - by written_by
    relationsByAgent: dict[str, int] = Field(default_factory=dict)  # noqa: N815
    entitiesBySource: dict[str, int] = Field(default_factory=dict)  # noqa: N815
    relationsBySource: dict[str, int] = Field(default_factory=dict)  # noqa: N815
    entityConfidence: ConfidenceStats | None = None  # noqa: N815
    relationConfidence: ConfidenceStats | None = None  # noqa: N815
    growth: list[DayGrowth] = Field(default_factory=list)  # entities and relations first written, per day
    growthBy: str = GROWTH_BY  # noqa: N815
    archivedEntities: int = 0  # noqa: N815 - hidden from reads until restored; in totalEntities
    conflictsOpen: int = 0  # noqa: N815
    # The call folded the writes the keeper had not yet as far as its bound (after a bulk import, say), and left
    # the rest: the counts leave out those writes until the keeper (every few seconds) or a later call folds them.
    countsBehind: bool = False  # noqa: N815


def _confidence(c: pure.Confidence) -> ConfidenceStats:
    return ConfidenceStats(
        buckets=[ConfidenceBucket(range=r, count=n) for r, n in zip(pure.bucket_ranges(), c.buckets, strict=True)],
        min=c.low,
        mean=round(c.mean, 6) if c.mean is not None else None,
        max=c.high,
    )


def _dated(row: dict[str, Any] | None) -> Dated | None:
    if row is None:
        return None
    return Dated(
        name=display_name({"name": row["name"], KEY_FIELD: row["key"]}), entityType=row["label"], date=row["at"]
    )


def _sorted(counts: dict[str, int]) -> dict[str, int]:
    return dict(sorted(counts.items()))


async def _rows(gate: Gate, statement: Statement | None) -> list[dict[str, Any]]:
    return await gate.reader.read(statement) if statement is not None else []


async def get_graph_stats(gate: Gate) -> GraphStats:
    registry = gate.registry
    labels = tuple(registry.all_canonical_labels())
    types = registry.all_relationship_types()
    try:  # the fold writes: a failure is the engine's, answered as one
        kept = await stat_counts.counted(gate.backend, labels, types)
    except (BackendUnavailable, BackendError) as exc:
        raise engine_failure(exc, "read") from exc
    [conflicts] = await gate.reader.read(cypher.OPEN_CONFLICTS)
    if kept is not None:
        entities = pure.tally(counters.tally_rows(kept.counters, counters.NODE, labels), "archived")
        relations = pure.tally(counters.tally_rows(kept.counters, counters.RELATIONSHIP, types), "count")
        ends = pure.extremes(counters.extreme_rows(kept.ends, list(labels)), labels)
        return graph_stats(entities, relations, ends, conflicts["count"], behind=kept.behind)
    return await _scanned(gate, labels, types, conflicts["count"])


async def _scanned(gate: Gate, labels: tuple[str, ...], types: list[str], conflicts_open: int) -> GraphStats:
    """The full scan: while a graph written before the writes kept counts is walked for its first count."""
    entities = pure.tally(await _rows(gate, cypher.node_tallies(labels)), "archived", labels)
    relations = pure.tally(await _rows(gate, Statement(cypher.RELATIONSHIP_TALLIES.text, {"types": types})), "count")
    ends = pure.extremes(await _rows(gate, cypher.oldest_and_newest(labels)), labels)
    return graph_stats(entities, relations, ends, conflicts_open)


def graph_stats(
    entities: pure.Tally,
    relations: pure.Tally,
    ends: dict[str, dict[str, Any]],
    conflicts_open: int,
    *,
    behind: bool = False,
) -> GraphStats:
    """The answer from the engine's tallies, however they were read."""
    return GraphStats(
        totalEntities=entities.total,
        totalRelations=relations.total,
        activeEntities=entities.total - entities.archived,
        entityTypesCounts=_sorted(entities.per_name),
        relationTypesCounts=_sorted(relations.per_name),
        oldestEntity=_dated(ends.get("oldest")),
        newestEntity=_dated(ends.get("newest")),
        entitiesByAgent=_sorted(entities.by_agent),
        relationsByAgent=_sorted(relations.by_agent),
        entitiesBySource=_sorted(entities.by_source),
        relationsBySource=_sorted(relations.by_source),
        entityConfidence=_confidence(entities.confidence),
        relationConfidence=_confidence(relations.confidence),
        growth=[DayGrowth(**day) for day in pure.growth(entities.by_day, relations.by_day)],
        archivedEntities=entities.archived,
        conflictsOpen=conflicts_open,
        countsBehind=behind,
    )

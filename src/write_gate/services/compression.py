"""memory-mcp's `compress_graph` (seed 004, "Compression Operations"): find_duplicates as the memory profile
answers it, then merge_entities of each group, its first name kept; answered as memory-mcp's CompressionResult.

Its work is one find_duplicates call's (one window of nodes, its `limit` of pairs: `more` says it left some), one
read of the groups' entities, and the groups' merges one by one, each as merge_entities runs it. A refusal stops
it where it is, never silently: the rejection names the groups merged before it (docs/tools/duplicates.md).
"""

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from write_gate.access.agents import Agent
from write_gate.core.compression import GroupCompressed, combined_observations, json_size, tally
from write_gate.core.knowledge import memory_mcp_stamps
from write_gate.core.model import GateRejection
from write_gate.core.resolution import DEFAULT_THRESHOLD
from write_gate.services.gate import Gate
from write_gate.services.reads import Entity, OpenNodesRequest
from write_gate.services.resolution import (
    MAX_MERGED,
    DuplicatesFound,
    FindDuplicatesRequest,
    MergedNode,
    MergeEntitiesRequest,
    find_duplicates,
    merge_entities,
    preview_merge,
)


class CompressGraphRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    threshold: Annotated[
        float, Field(ge=0.0, le=1.0, allow_inf_nan=False, description="find_duplicates' threshold, 0..1.")
    ] = DEFAULT_THRESHOLD
    dryRun: Annotated[bool, Field(description="Report what would be merged; change nothing.")] = False  # noqa: N815


class MergedGroup(BaseModel):
    kept: str
    merged: list[str]


class CompressionResult(BaseModel):
    """memory-mcp's CompressionResult; `status` and `more` are the gate's (not in the text)."""

    status: Literal["compressed"] = "compressed"
    duplicatesFound: int  # noqa: N815 - memory-mcp's field names
    entitiesMerged: int  # noqa: N815
    observationsCompressed: int  # noqa: N815
    relationsConsolidated: int  # noqa: N815
    spaceFreed: int  # noqa: N815
    mergedEntities: list[MergedGroup]  # noqa: N815
    more: bool = Field(
        default=False, description="find_duplicates left pairs or nodes unread: calling again may merge more."
    )


def _memory_mcp_entity(entity: Entity) -> dict[str, Any]:
    """The entity as memory-mcp stores it (name, type, observations, tags, importance, parent, its two stamps)."""
    held = entity.model_dump(mode="json", by_alias=True, exclude={"labels", "properties", "provenance"})
    return {**held, **memory_mcp_stamps(entity.properties)}


def _group_labels(found: DuplicatesFound) -> dict[str, set[str]]:
    """Each grouped name's labels among the pairs (a group is of one label; a name may be held under another)."""
    labels: dict[str, set[str]] = {}
    for pair in found.pairs:
        for node in pair.nodes:
            labels.setdefault(node.name, set()).add(node.label)
    return labels


def _relations(merged: list[MergedNode]) -> int:
    """Relationships the merges moved to the survivor, folded into its own, or dropped (those joining the two)."""
    return sum(m.relationships_moved + m.relationships_merged + len(m.relationships_dropped) for m in merged)


async def compress_graph(gate: Gate, request: CompressGraphRequest, agent: Agent) -> CompressionResult:
    found = await find_duplicates(gate, FindDuplicatesRequest(threshold=request.threshold), memory_mcp=True)
    groups = [group for group in found.groups if len(group) > 1]
    more = found.more or found.next_cursor is not None
    if not groups:
        return CompressionResult(**_figures([]), mergedEntities=[], more=more)
    labels = _group_labels(found)
    group_labels = [min(set.intersection(*(labels[name] for name in group))) for group in groups]  # found in
    agent.grant.check_labels(set(group_labels))  # refused before anything is merged
    names = list(dict.fromkeys(name for group in groups for name in group))
    opened = await gate.reader.open_nodes(OpenNodesRequest(names=names, relations_limit=1))
    before = {(e.name, e.entityType): e for e in opened.entities}
    done: list[GroupCompressed] = []
    for group, label in zip(groups, group_labels, strict=True):
        entities = [before.get((name, label)) for name in group]
        observations = [e.observations if e is not None else [] for e in entities]
        try:
            merged, after = await _merge_group(gate, group, agent, request.dryRun)
        except GateRejection as refused:
            raise _stopped(refused, group, done) from refused
        after = combined_observations(observations) if after is None else after
        size = sum(json_size(_memory_mcp_entity(e)) for e in entities[1:] if e is not None)
        done.append(GroupCompressed(tuple(group), tuple(map(len, observations)), after, _relations(merged), size))
    return CompressionResult(**_figures(done), mergedEntities=_merged_groups(done), more=more)


async def _merge_group(
    gate: Gate, group: list[str], agent: Agent, dry_run: bool
) -> tuple[list[MergedNode], int | None]:
    """The group merged into its first name (or, on a dry run, planned), MAX_MERGED names a merge_entities call;
    and how many observations the survivor holds after (None on a dry run: nothing was read after)."""
    merged: list[MergedNode] = []
    after = None
    for start in range(1, len(group), MAX_MERGED):
        merge = MergeEntitiesRequest(entityNames=[group[0], *group[start : start + MAX_MERGED]])
        if dry_run:
            merged += await preview_merge(gate, merge, agent)
            continue
        answer = await merge_entities(gate, merge, agent)
        merged += answer.merged
        after = len(answer.entity.observations) if answer.entity is not None else None
    return merged, after


def _figures(groups: list[GroupCompressed]) -> dict[str, int]:
    figures = tally(groups)
    return {
        "duplicatesFound": figures.duplicates_found,
        "entitiesMerged": figures.entities_merged,
        "observationsCompressed": figures.observations_compressed,
        "relationsConsolidated": figures.relations_consolidated,
        "spaceFreed": figures.space_freed,
    }


def _merged_groups(groups: list[GroupCompressed]) -> list[MergedGroup]:
    return [MergedGroup(kept=g.names[0], merged=list(g.names[1:])) for g in groups]


def _stopped(refused: GateRejection, group: list[str], done: list[GroupCompressed]) -> GateRejection:
    """The refusal of a group's merge, saying where compress_graph stopped: the groups merged before it (kept),
    and the group refused (merge_entities merges a name at a time: one of three may be merged already)."""
    rejected = refused.rejected
    return GateRejection(
        rejected.error_code,
        f"compress_graph stopped at the group {group}: {rejected.message}",
        **rejected.details,
        stopped_at=group,
        merged_before=[m.model_dump() for m in _merged_groups(done)],
    )

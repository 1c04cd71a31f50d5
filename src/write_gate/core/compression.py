"""memory-mcp's compress_graph (seed 004, "Compression Operations"): what a compression reports. Pure.

compress_graph merges each group find_duplicates answers into its first name; these figures say what that did
(or, on a dry run, would do), group by group, and add up to memory-mcp's CompressionResult.
"""

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GroupCompressed:
    """One group as merged: its names (the first kept), each entity's observation count before the merge, the
    survivor's after, the relationships the merges moved, folded or dropped, and the merged-away entities' size."""

    names: tuple[str, ...]
    observations_before: tuple[int, ...]
    observations_after: int
    relations: int
    size: int


@dataclass(frozen=True)
class Compression:
    duplicates_found: int
    entities_merged: int
    observations_compressed: int
    relations_consolidated: int
    space_freed: int


def combined_observations(lists: Iterable[Sequence[str]]) -> int:
    """How many observations a merge of entities holding these leaves: each one once (as merging.combined joins
    them)."""
    return len(dict.fromkeys(item for observations in lists for item in observations))


def json_size(value: Mapping[str, Any]) -> int:
    """An entity's size as memory-mcp would store it: its compact JSON, in UTF-8 bytes."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def tally(groups: Sequence[GroupCompressed]) -> Compression:
    """The groups' figures added up: every entity of a group is a duplicate, all but the first merged away; the
    observations saved are those the group held beyond what its survivor holds after (never below 0, were an
    observation written meanwhile)."""
    return Compression(
        duplicates_found=sum(len(g.names) for g in groups),
        entities_merged=sum(len(g.names) - 1 for g in groups),
        observations_compressed=sum(max(0, sum(g.observations_before) - g.observations_after) for g in groups),
        relations_consolidated=sum(g.relations for g in groups),
        space_freed=sum(g.size for g in groups),
    )

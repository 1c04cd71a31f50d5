"""Merging one node into another (pure): what the survivor gains, what conflicts, where relationships go.

The survivor's values win. A property only the merged node has is copied to the survivor; the observations and
tags both have are combined (each item once), and the greater importance kept (seed 004's merge); any other
property both have with different values is a conflict: reported, and kept where it is, on the merged node,
which stays in the graph as the survivor's alias (its identity still reaches the survivor). Relationships move
to the survivor in both directions; one that would then repeat a relationship the survivor already has (same
type, direction and other end) is merged into it the same way (the survivor's values win, the rest is copied).
Relationships between the two nodes (and the merged node's loops) would become the survivor's loops: they are
dropped, and the answer says so.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from write_gate.core.claims import claim_name
from write_gate.core.decay import parse_at
from write_gate.core.identifiers import COMPUTED_FIELDS, CREATED_FIELD, is_identifier
from write_gate.core.identity import FOLD_PREFIX, folded_value
from write_gate.core.knowledge import IMPORTANCE, OBSERVATIONS, TAGS, as_number
from write_gate.core.stat_counts import DUE, STAT

# Not data an agent wrote: provenance, the weight (averaged by writes, not owned by either side), internals.
_NOT_DATA = frozenset(COMPUTED_FIELDS) | {"weight"}


def is_data(key: str) -> bool:
    return not key.startswith("_") and key not in _NOT_DATA and is_identifier(key)


@dataclass(frozen=True)
class Conflict:
    property: str
    survivor: Any
    merged: Any


# Values of separate facts, which a merge combines rather than holds in conflict (seed 004's merge: the
# observations and tags of both, each once; the greater importance).
COMBINED_LISTS = (OBSERVATIONS, TAGS)
GREATER = (IMPORTANCE,)


def _texts(value: Any) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def combined(survivor: Mapping[str, Any], merged: Mapping[str, Any]) -> dict[str, Any]:
    """The survivor's new values where both nodes hold a combined property: its list, then the merged node's
    items it lacks (as the tag tools add tags), with the folded search text; the merged
    node's importance where greater, with its claim; its `created_at` where earlier (seed 004: the merged entity
    was created when the first of them was). A property left as the survivor holds it is not here."""
    out: dict[str, Any] = {}
    if _earlier(merged.get(CREATED_FIELD), survivor.get(CREATED_FIELD)):
        out[CREATED_FIELD] = merged[CREATED_FIELD]
    for key in COMBINED_LISTS:
        mine, theirs = survivor.get(key), merged.get(key)
        if _texts(mine) and _texts(theirs):
            joined = list(dict.fromkeys([*mine, *theirs]))
            if joined != mine:
                out[key] = joined
                out[FOLD_PREFIX + key] = folded_value(joined) or []
    for key in GREATER:
        mine_n, theirs_n = as_number(survivor.get(key)), as_number(merged.get(key))
        if mine_n is not None and theirs_n is not None and theirs_n > mine_n:
            out[key] = merged[key]
            if (claim := merged.get(claim_name(key))) is not None:
                out[claim_name(key)] = claim
    return out


def _earlier(this: Any, that: Any) -> bool:
    """Whether `this` is a time before `that` (both stored times; anything else is not compared)."""
    try:
        return isinstance(this, str) and isinstance(that, str) and parse_at(this) < parse_at(that)
    except ValueError:
        return False


def _combines(key: str, survivor: Mapping[str, Any], merged: Mapping[str, Any]) -> bool:
    """Whether `combined` decides the key, so that differing values are no conflict."""
    if key in COMBINED_LISTS:
        return _texts(survivor.get(key)) and _texts(merged.get(key))
    return key in GREATER and None not in (as_number(survivor.get(key)), as_number(merged.get(key)))


def union(survivor: Mapping[str, Any], merged: Mapping[str, Any]) -> tuple[dict[str, Any], list[Conflict]]:
    """The merged node's data the survivor lacks (with its folded search text and its claim: who wrote it stays
    known), and the values that differ (but those `combined` decides)."""
    fill: dict[str, Any] = {}
    conflicts: list[Conflict] = []
    for key in sorted(merged):
        if not is_data(key) or (key in survivor and _combines(key, survivor, merged)):
            continue
        if key not in survivor:
            fill[key] = merged[key]
            for companion in (FOLD_PREFIX + key, claim_name(key)):
                if (value := merged.get(companion)) is not None:
                    fill[companion] = value
        elif survivor[key] != merged[key]:
            conflicts.append(Conflict(key, survivor[key], merged[key]))
    return fill, conflicts


@dataclass(frozen=True)
class Link:
    """One relationship of the merged node, as read before the merge."""

    id: int
    type: str
    outgoing: bool
    other: int  # the other end's id
    properties: Mapping[str, Any]
    twin: Mapping[str, Any] | None  # the survivor's relationship of this type and direction to `other`


@dataclass(frozen=True)
class Group:
    """The merged node's relationships of one type and direction that move: one clause of the statement."""

    type: str
    outgoing: bool
    keys: tuple[str, ...]  # every property they hold, copied where the survivor's relationship lacks it


@dataclass(frozen=True)
class RelationshipConflict:
    type: str
    direction: str
    other: int
    property: str
    survivor: Any
    merged: Any


@dataclass(frozen=True)
class RelationshipPlan:
    groups: tuple[Group, ...]
    moved: int  # re-pointed as they are
    merged: int  # folded into a relationship the survivor had
    dropped: tuple[tuple[str, str], ...]  # (type, direction) of relationships between the two nodes
    conflicts: tuple[RelationshipConflict, ...]
    types: tuple[str, ...]  # every type touched (a grant must allow writing each)


def direction(outgoing: bool) -> str:
    return "out" if outgoing else "in"


def plan_relationships(links: Sequence[Link], survivor_id: int, merged_id: int) -> RelationshipPlan:
    keys: dict[tuple[str, bool], set[str]] = {}
    moved = merged = 0
    dropped: list[tuple[str, str]] = []
    conflicts: list[RelationshipConflict] = []
    for link in sorted(links, key=lambda link: link.id):
        if link.other in (survivor_id, merged_id):
            dropped.append((link.type, direction(link.outgoing)))
            continue
        # Every property moves with it but what it was counted as: the moved one is counted anew.
        copied = (k for k in link.properties if is_identifier(k) and k not in (STAT, DUE))
        keys.setdefault((link.type, link.outgoing), set()).update(copied)
        if link.twin is None:
            moved += 1
            continue
        merged += 1
        for key in sorted(link.properties):
            if is_data(key) and key in link.twin and link.twin[key] != link.properties[key]:
                conflicts.append(
                    RelationshipConflict(
                        link.type, direction(link.outgoing), link.other, key, link.twin[key], link.properties[key]
                    )
                )
    groups = tuple(Group(t, out, tuple(sorted(k))) for (t, out), k in sorted(keys.items()))
    return RelationshipPlan(
        groups=groups,
        moved=moved,
        merged=merged,
        dropped=tuple(dropped),
        conflicts=tuple(conflicts),
        types=tuple(sorted({link.type for link in links})),
    )

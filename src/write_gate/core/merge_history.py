"""The change records of one merge (`core.merging`), from what the merge was planned on.

A merge moves values; it loses none (the merged node stays, as an alias, with its own values). What it
records: the values copied onto the survivor (set, nothing before, each with the claim it had on the merged
node); each relationship of the merged node as deleted (every value it held); and the values the survivor's
relationship gains in its place (set, as copied, with their claims). One record per subject. A value the
survivor already had is not overwritten, so it is no change.
"""

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from write_gate.core.claims import claim_name, is_claim, parse_claim
from write_gate.core.conflicts import Conflict, Outcome
from write_gate.core.history import (
    AFTER_VALUES,
    BEFORE_CLAIMS,
    BEFORE_VALUES,
    CLAIMS,
    PROPERTIES,
    Op,
    Subject,
    conflict_records,
    delete_changes,
    wrapped,
)
from write_gate.core.merging import Conflict as MergeConflict
from write_gate.core.merging import Link, is_data
from write_gate.core.registry import ConflictPolicy


@dataclass(frozen=True)
class End:
    """A node a record names: its label and identity key."""

    label: str
    key: str


@dataclass(frozen=True)
class MergeContext:
    change_id: str
    at: str
    agent: str
    survivor: End
    merged: End


def _between(type_: str, outgoing: bool, node: End, other: End) -> Subject:
    start, end = (node, other) if outgoing else (other, node)
    return Subject.relationship(type_, start.label, start.key, end.label, end.key)


def _claim(values: Mapping[str, Any], name: str) -> Any:
    claim = values.get(claim_name(name))
    return claim if parse_claim(claim) is not None else []


def _copied(
    subject: Subject,
    values: Mapping[str, Any],
    names: Sequence[str],
    ctx: MergeContext,
    before: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """One record of the values set on `subject`, each with the claim it had (nothing before them, but where
    `before` holds the value it replaced: a combined one, with its claim kept where it has none of its own)."""
    if not names:
        return []
    before = before or {}
    record = {"change_id": ctx.change_id, "at": ctx.at, "seq": ctx.at, "op": Op.SET.value, **subject.fields()}
    return [
        {
            **record,
            "agent": ctx.agent,
            PROPERTIES: list(names),
            BEFORE_VALUES: [wrapped(before[name]) if name in before else [] for name in names],
            AFTER_VALUES: [wrapped(values[name]) for name in names],
            BEFORE_CLAIMS: [_claim(before, name) for name in names],
            CLAIMS: [_claim(values, name) or _claim(before, name) for name in names],
        }
    ]


def _recorded(name: str) -> bool:
    return not name.startswith("_") and not is_claim(name)


def merge_changes(
    ctx: MergeContext,
    fill: Mapping[str, Any],
    links: Sequence[tuple[Link, End]],
    survivor_id: int,
    merged_id: int,
    combined: Mapping[str, Any] | None = None,
    survivor_values: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """`fill`: what `union` copies to the survivor; `combined`: the survivor's values `core.merging.combined`
    replaces, `survivor_values` what they replace; `links`: the merged node's relationships with their other
    ends, as read when the merge was planned."""
    survivor = Subject.node(ctx.survivor.label, ctx.survivor.key)
    values = {**fill, **(combined or {})}
    held = survivor_values or {}
    replaced = {k: held[k] for name in combined or {} for k in (name, claim_name(name)) if k in held}
    records = _copied(survivor, values, sorted(k for k in values if is_data(k)), ctx, replaced)
    for link, other in sorted(links, key=lambda pair: pair[0].id):
        gone = _between(link.type, link.outgoing, ctx.merged, other)
        records += delete_changes(gone, link.properties, ctx.change_id, ctx.at, ctx.agent)
        if link.other in (survivor_id, merged_id):
            continue  # between the two nodes: dropped, not moved
        twin = link.twin or {}
        gained = sorted(k for k in link.properties if _recorded(k) and k not in twin)
        records += _copied(_between(link.type, link.outgoing, ctx.survivor, other), link.properties, gained, ctx)
    return records


def held_open(
    subject: Subject,
    survivor: Mapping[str, Any],
    merged: Mapping[str, Any],
    conflicts: Sequence[MergeConflict],
    change_id: str,
    at: str,
    new_id: Callable[[], str],
    identity: Collection[str] = (),
) -> dict[str, tuple[dict[str, Any], str]]:
    """A value both nodes hold differently stays the survivor's, and the merged one is held beside it as an open
    conflict (keep_both: nothing lost, resolve_conflict picks), by property: its record and id. A value without
    a claim on either side (written before claims) is only reported: there is no claim to hold it with; nor is
    one of the survivor's merge keys (`identity`: the merged node's name is its alias, not a rival value)."""
    held: dict[str, tuple[dict[str, Any], str]] = {}
    for c in conflicts:
        if c.property in identity:
            continue
        current = parse_claim(survivor.get(claim_name(c.property)))
        incoming = parse_claim(merged.get(claim_name(c.property)))
        if current is None or incoming is None:
            continue
        conflict = Conflict(c.property, ConflictPolicy.KEEP_BOTH, Outcome.OPEN, c.survivor, current, c.merged, incoming)
        conflict_id = new_id()
        [record] = conflict_records(subject, [conflict], change_id, at, [conflict_id])
        held[c.property] = (record, conflict_id)
    return held

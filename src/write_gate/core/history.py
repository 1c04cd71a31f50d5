"""The change history and the conflict records, built purely (issue 12, items 3 and 4).

Every value a gate changes leaves one `:WriteGateChange` record, written by the same statement as the
change (so a change and its record land together or not at all): what it was before, what it is after, who
changed it with which claim, when, and the subject's revision after the change. A deleted node or
relationship leaves one record per value it held (`after` absent). Records are never updated; a retention
setting prunes the oldest.

Every conflict (`core.conflicts`) leaves one `:WriteGateConflict` record: `settled` when its policy decided
it, `open` when it waits for `resolve_conflict` (keep_both), `resolved` once one has picked a claim.

Records are maps of scalars and lists, the only values both engines store (FalkorDB has no map
properties); an absent value is left out of the map rather than stored as null.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from write_gate.core.claims import ValueProvenance, is_claim, parse_claim, split_claims
from write_gate.core.conflicts import Conflict, Outcome

CHANGE_LABEL = "WriteGateChange"
CONFLICT_LABEL = "WriteGateConflict"
REVISION_FIELD = "_rev"  # a node's or relationship's revision: +1 per accepted write, the writers' guard


class Op(StrEnum):
    SET = "set"  # a value written (before absent: it is new)
    DELETE = "delete"  # the node or relationship was deleted; before is what it held
    RESOLVE = "resolve"  # resolve_conflict picked the held claim


class ConflictStatus(StrEnum):
    SETTLED = "settled"  # its policy decided it at write time (recorded, nothing to do)
    OPEN = "open"  # keep_both: both claims are kept until someone picks one
    RESOLVED = "resolved"  # resolve_conflict picked one


@dataclass(slots=True)  # not frozen: built per item of a batch, where a frozen init costs 5x
class Subject:
    """What a record is about: a node (label, identity key) or a relationship (type and both endpoints)."""

    kind: Literal["node", "relationship"]
    label: str  # the node's label or the relationship's type
    key: str | None = None  # a node's identity key (core.identity)
    from_label: str | None = None
    from_key: str | None = None
    to_label: str | None = None
    to_key: str | None = None

    @classmethod
    def node(cls, label: str, key: str) -> "Subject":
        return cls("node", label, key=key)

    @classmethod
    def relationship(cls, type_: str, from_label: str, from_key: str, to_label: str, to_key: str) -> "Subject":
        return cls("relationship", type_, from_label=from_label, from_key=from_key, to_label=to_label, to_key=to_key)

    def fields(self) -> dict[str, Any]:
        values = {
            "subject": self.kind,
            "label": self.label,
            "key": self.key,
            "from_label": self.from_label,
            "from_key": self.from_key,
            "to_label": self.to_label,
            "to_key": self.to_key,
        }
        return {k: v for k, v in values.items() if v is not None}


@dataclass(slots=True)  # not frozen: built per item of a batch, where a frozen init costs 5x
class WriteContext:
    """One accepted write: its id (shared by its records), time, the subject's revision after it, and the
    claim it stamps on the values it sets."""

    change_id: str
    at: str
    revision: int
    claim: ValueProvenance


def _record(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _claim_fields(claim: ValueProvenance) -> list[Any]:
    return [claim.agent, claim.source, claim.extraction_method, claim.confidence, claim.at]


def _claim_list(claim: ValueProvenance | None) -> list[Any] | None:
    return None if claim is None else _claim_fields(claim)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def set_changes(
    subject: Subject, before: Mapping[str, Any] | None, written: Mapping[str, Any], ctx: WriteContext
) -> list[dict[str, Any]]:
    """A record per value `written` changes on a subject that held `before` (None: it did not exist). A value
    written again unchanged is no change, and leaves none."""
    before = before or {}
    # What every record of this write shares, built once: a batch writes tens of thousands of them.
    shared = _record(change_id=ctx.change_id, at=ctx.at, revision=ctx.revision, op=Op.SET.value, **subject.fields())
    claim, agent = _claim_fields(ctx.claim), ctx.claim.agent
    records = []
    for prop, after in written.items():
        old = before.get(prop)
        if prop in before and _same(old, after):
            continue
        record = {**shared, "property": prop}
        if old is not None:
            record["before"] = old
        if after is not None:
            record["after"] = after
        if (before_claim := _claim_list(parse_claim(before.get("_p_" + prop)))) is not None:
            record["before_claim"] = before_claim
        records.append({**record, "claim": list(claim), "agent": agent})
    return records


def delete_changes(
    subject: Subject, before: Mapping[str, Any], change_id: str, at: str, agent: str, revision: int | None = None
) -> list[dict[str, Any]]:
    """A record per value a deleted subject held (its gate-owned `_` properties aside, its claims kept with
    their values), so nothing a gate accepted is lost with it."""
    plain, claims = split_claims(before)
    return [
        _record(
            change_id=change_id,
            at=at,
            revision=revision,
            op=Op.DELETE.value,
            **subject.fields(),
            property=prop,
            before=value,
            before_claim=_claim_list(claims.get(prop)),
            agent=agent,
        )
        for prop, value in sorted(plain.items())
        if not prop.startswith("_") and not is_claim(prop) and value is not None
    ]


def conflict_records(
    subject: Subject, conflicts: Iterable[Conflict], ctx: WriteContext, ids: Iterable[str]
) -> list[dict[str, Any]]:
    """One record per conflict a write met, each with its own id (`ids`, one per conflict)."""
    return [
        _record(
            conflict_id=conflict_id,
            change_id=ctx.change_id,
            at=ctx.at,
            status=(ConflictStatus.OPEN if c.outcome is Outcome.OPEN else ConflictStatus.SETTLED).value,
            **subject.fields(),
            property=c.property,
            policy=c.policy.value,
            outcome=c.outcome.value,
            current_value=c.current_value,
            current_claim=_claim_list(c.current),
            incoming_value=c.incoming_value,
            incoming_claim=_claim_list(c.incoming),
        )
        for c, conflict_id in zip(conflicts, ids, strict=True)
    ]

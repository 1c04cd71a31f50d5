"""The change history and the conflict records, built purely (issue 12, items 3 and 4; issue 28, items 2 and 3).

Every accepted write that changes a value leaves one `:WriteGateChange` record, written by the same statement
as the change (so a change and its record land together or not at all): which values it changed, each one's
value before and after and the claim it replaced, who changed them with which claim, when, the subject's
revision after the change, and its place in the subject's order (`seq`). A deleted node or relationship leaves
one record holding every value it had. Records are never updated; a retention setting prunes the oldest.

A record's values are lists aligned with its `properties`, the only form both engines store (FalkorDB has no
map properties and no null inside a list): `before_values[i]` is `[]` when the value was absent and `[v]`
otherwise (`v` may itself be a list), `after_values[i]` likewise (`[]`: removed), `before_claims[i]` the
replaced claim or `[]` (both lists left out when the write created its subject: nothing was before), and
`claims[i]`, where a record carries one (a merge copies values with the claims they
had), the claim of the value written, else the record's own `claim`. Records written before this form hold one
value each (`property`, `before`, `after`, `before_claim`, and absent values left out); `value_changes` reads
both forms as one entry per value, which is what the tools answer. See docs/history.md.

Order: `seq` is text that sorts as the subject's changes happened. It is the writer's `at`, unless the subject's
last change (`_seq` on the node or relationship, set by the same statement) sorts at or after it: then that one
with a `#` after it. The statement computes it from what it reads, so two gates racing on one subject cannot
stamp them out of order, whatever their clocks (core/cypher/change_order.py). A record built here carries `seq` =
`at` until the statement that writes it puts the computed one in.

Every conflict (`core.conflicts`) leaves one `:WriteGateConflict` record: `settled` when its policy decided
it, `open` when it waits for `resolve_conflict` (keep_both), `resolved` once one has picked a claim.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from write_gate.core.claims import ValueProvenance, is_claim, parse_claim
from write_gate.core.conflicts import Conflict, Outcome

CHANGE_LABEL = "WriteGateChange"
CONFLICT_LABEL = "WriteGateConflict"
REVISION_FIELD = "_rev"  # a node's or relationship's revision: +1 per accepted write, the writers' guard
SEQ_FIELD = "_seq"  # the `seq` of a node's or relationship's last change record (see the module's docstring)
# The fields of a record in its one-per-write form, beside the write's own (change_id, at, seq, op, ...).
PROPERTIES, BEFORE_VALUES, AFTER_VALUES, BEFORE_CLAIMS, CLAIMS = (
    "properties",
    "before_values",
    "after_values",
    "before_claims",
    "claims",
)


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


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def wrapped(value: Any) -> list[Any]:
    """A value as a record's aligned lists hold it: `[]` for none, else `[value]`."""
    return [] if value is None else [value]


def unwrapped(stored: Any) -> Any:
    return stored[0] if isinstance(stored, list) and stored else None


def _stored_claim(value: Any) -> list[Any]:
    """A claim as `before_claims` holds it: the stored list when it is one, else `[]`."""
    return value if parse_claim(value) is not None else []


def set_changes(
    subject: Subject, before: Mapping[str, Any] | None, written: Mapping[str, Any], ctx: WriteContext
) -> list[dict[str, Any]]:
    """The record of a write of `written` on a subject that held `before` (None: it did not exist): one record
    for every value it changes, none when it changes none (a value written again unchanged is no change)."""
    held = before or {}
    names = [prop for prop, after in written.items() if prop not in held or not _same(held[prop], after)]
    if not names:
        return []
    record = _record(
        change_id=ctx.change_id,
        at=ctx.at,
        seq=ctx.at,
        revision=ctx.revision,
        op=Op.SET.value,
        **subject.fields(),
        agent=ctx.claim.agent,
        claim=_claim_fields(ctx.claim),
    )
    record |= {PROPERTIES: names, AFTER_VALUES: [wrapped(written[prop]) for prop in names]}
    if before is not None:  # nothing was before a subject the write created: those lists are left out
        record[BEFORE_VALUES] = [wrapped(held.get(prop)) for prop in names]
        record[BEFORE_CLAIMS] = [_stored_claim(held.get("_p_" + prop)) for prop in names]
    return [record]


def delete_changes(
    subject: Subject, before: Mapping[str, Any], change_id: str, at: str, agent: str, revision: int | None = None
) -> list[dict[str, Any]]:
    """The record of a deleted subject: every value it held (its gate-owned `_` properties aside, each value's
    claim kept beside it), so nothing a gate accepted is lost with it; none when it held no value."""
    names = sorted(
        prop for prop, value in before.items() if not prop.startswith("_") and not is_claim(prop) and value is not None
    )
    if not names:
        return []
    record = _record(
        change_id=change_id, at=at, seq=at, revision=revision, op=Op.DELETE.value, **subject.fields(), agent=agent
    )
    return [
        {
            **record,
            PROPERTIES: names,
            BEFORE_VALUES: [[before[prop]] for prop in names],
            AFTER_VALUES: [[] for _ in names],
            BEFORE_CLAIMS: [_stored_claim(before.get("_p_" + prop)) for prop in names],
        }
    ]


_SUBJECT_FIELDS = ("subject", "label", "key", "from_label", "from_key", "to_label", "to_key")
_SHARED_FIELDS = ("change_id", "at", "seq", "revision", "op", *_SUBJECT_FIELDS, "agent")


def value_changes(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A record as one entry per value, each as a record of the one-value form holds it (`property`, `before`,
    `after`, `before_claim`, `claim`; absent ones left out), in the order of its `properties`. A record of the
    one-value form is its own entry."""
    names = record.get(PROPERTIES)
    if not isinstance(names, list):
        return [dict(record)]
    shared = {field: record[field] for field in _SHARED_FIELDS if record.get(field) is not None}
    befores, afters = record.get(BEFORE_VALUES) or [], record.get(AFTER_VALUES) or []
    before_claims, claims = record.get(BEFORE_CLAIMS) or [], record.get(CLAIMS)
    out = []
    for i, name in enumerate(names):
        entry = _record(
            **shared,
            property=name,
            before=unwrapped(befores[i] if i < len(befores) else None),
            after=unwrapped(afters[i] if i < len(afters) else None),
            before_claim=(before_claims[i] or None) if i < len(before_claims) else None,
            claim=(claims[i] or None) if claims is not None and i < len(claims) else record.get("claim"),
        )
        out.append(entry)
    return out


def conflict_records(
    subject: Subject, conflicts: Iterable[Conflict], change_id: str, at: str, ids: Iterable[str]
) -> list[dict[str, Any]]:
    """One record per conflict a write met (`change_id`, at `at`), each with its own id (`ids`, one per
    conflict)."""
    return [
        _record(
            conflict_id=conflict_id,
            change_id=change_id,
            at=at,
            status=(ConflictStatus.OPEN if c.outcome is Outcome.OPEN else ConflictStatus.SETTLED).value,
            **subject.fields(),
            property=c.property,
            policy=c.policy.value,
            outcome=c.outcome.value,
            current_value=c.current_value,
            current_claim=_claim_fields(c.current),
            incoming_value=c.incoming_value,
            incoming_claim=_claim_fields(c.incoming),
        )
        for c, conflict_id in zip(conflicts, ids, strict=True)
    ]

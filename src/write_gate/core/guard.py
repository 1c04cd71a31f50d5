"""A write under the conflict policies, with its records, decided purely from what its subject held when read.

The gate reads the subject (its values, claims and revision), decides here, and writes the result with a guard
on that revision: if another writer changed the subject in between, the write lands nowhere and the gate reads
and decides again (services/gate.py, a bounded number of times). So a policy always judges the value the
write actually replaces, and every record describes a change that happened.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from write_gate.core.claims import ValueProvenance
from write_gate.core.conflicts import decide
from write_gate.core.cypher.records import Guard
from write_gate.core.history import REVISION_FIELD, Subject, WriteContext, conflict_records, set_changes
from write_gate.core.model import ConflictMet
from write_gate.core.registry import ConflictPolicy


@dataclass(slots=True)  # not frozen: built per item of a batch, where a frozen init costs 5x
class Guarded:
    write: dict[str, Any]  # the properties to set, the policies applied
    revision: int  # the subject's revision as read: the write's guard (absent subject: 0)
    changes: list[dict[str, Any]]  # `:WriteGateChange` records
    conflicts: list[dict[str, Any]]  # `:WriteGateConflict` records
    met: list[ConflictMet]  # the conflicts, as the write's answer lists them
    change_id: str = ""

    def as_guard(self, fresh: bool) -> Guard:
        """What the guarded statement carries; `fresh`: the subject was absent when read."""
        return Guard(self.revision, fresh, self.changes, self.conflicts, self.change_id)


def revision_of(current: Mapping[str, Any] | None) -> int:
    value = (current or {}).get(REVISION_FIELD)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def next_weight(current: Any, given: float | None, fresh: bool) -> float:
    """A relationship's weight after a write, as the statements compute it (core/cypher/records.py): started
    (the one given, else 1.0), or averaged with the one given."""
    stored = current if isinstance(current, int | float) and not isinstance(current, bool) else None
    if fresh or given is None:
        return stored if stored is not None else (given if given is not None else 1.0)
    return ((stored if stored is not None else 1.0) + given) / 2


def guard_write(
    subject: Subject,
    current: Mapping[str, Any] | None,
    incoming: Mapping[str, Any],
    identity: Mapping[str, Any],
    claim: ValueProvenance,
    policy_of: Callable[[str], ConflictPolicy],
    weigh: Callable[[ValueProvenance], float],
    change_id: str,
    new_id: Callable[[], str],
    computed: Mapping[str, Any] | None = None,
) -> Guarded:
    """`current`: the subject's stored properties, None when it does not exist yet (then its `identity`, the
    merge keys it is created with, is recorded as written too). `computed`: values the statement itself sets
    (a relationship's weight), recorded when they change. Raises CONFLICT under a `reject` policy."""
    if current is None:
        return fresh_write(subject, incoming, identity, claim, change_id, computed)
    decision = decide(current, incoming, claim, policy_of, weigh)
    revision = revision_of(current)
    ctx = WriteContext(change_id, claim.at, revision + 1, claim)
    met = [
        ConflictMet(
            conflict_id=new_id(),
            property=c.property,
            policy=c.policy.value,
            outcome=c.outcome.value,
            current_value=c.current_value,
            current=c.current,
        )
        for c in decision.conflicts
    ]
    return Guarded(
        write=decision.write,
        revision=revision,
        changes=set_changes(subject, current, {**decision.write, **(computed or {})}, ctx),
        conflicts=conflict_records(subject, decision.conflicts, change_id, claim.at, [m.conflict_id for m in met]),
        met=met,
        change_id=change_id,
    )


def fresh_write(
    subject: Subject,
    incoming: Mapping[str, Any],
    identity: Mapping[str, Any],
    claim: ValueProvenance,
    change_id: str,
    computed: Mapping[str, Any] | None = None,
) -> Guarded:
    """`guard_write` for a subject absent when read: no value to conflict with, so every incoming one is written
    (no policy to weigh, nothing to decide), and the identity it is created with is recorded as written too."""
    ctx = WriteContext(change_id, claim.at, 1, claim)
    written = {**identity, **incoming, **(computed or {})}
    return Guarded(
        write=dict(incoming),
        revision=0,
        changes=set_changes(subject, None, written, ctx),
        conflicts=[],
        met=[],
        change_id=change_id,
    )

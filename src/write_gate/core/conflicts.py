"""Conflicts between writers, decided purely (issue 12, item 3).

A conflict is a write that would change a value whose claim (`core.claims`) is another writer's: a
different agent or a different source. The same agent restating its own source's value is a correction,
not a conflict. A policy per property decides what the write does to that value:

- `last_writer_wins`: the incoming value is written (today's result); the conflict is recorded.
- `higher_confidence_wins`: the incoming value is written only if its effective confidence (after decay) is
  at least the current one's (a tie goes to the newer); otherwise the current value stays; recorded either way.
- `reject`: the whole write is refused with CONFLICT; the details carry each current value and its claim.
- `keep_both`: the current value stays and the incoming one is held as a claim beside it; the conflict
  stays open until resolved.

Atomicity is the caller's: it reads the node's values, claims and revision, decides here, and writes with a
guard on the revision; a write that lost the race reads and decides again (services/gate.py).
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from write_gate.core.claims import ValueProvenance, claim_name, parse_claim
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.core.registry import ConflictPolicy


class Outcome(StrEnum):
    OVERWRITTEN = "overwritten"  # the incoming value replaced the current one
    KEPT = "kept"  # the current value stayed; the incoming one is recorded only
    OPEN = "open"  # keep_both: the incoming value is held beside the current one


@dataclass(frozen=True)
class Conflict:
    property: str
    policy: ConflictPolicy
    outcome: Outcome
    current_value: Any
    current: ValueProvenance
    incoming_value: Any
    incoming: ValueProvenance


@dataclass(frozen=True)
class Decision:
    write: dict[str, Any]  # the properties to set (the incoming ones the policies let through)
    conflicts: list[Conflict] = field(default_factory=list)

    @property
    def held(self) -> dict[str, Any]:
        """keep_both: the incoming values held beside the current ones, by property."""
        return {c.property: c.incoming_value for c in self.conflicts if c.outcome is Outcome.OPEN}


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def is_conflict(current: Any, claim: ValueProvenance | None, incoming: Any, by: ValueProvenance) -> bool:
    """A change of value over another writer's claim. A value with no claim (written before claims) has no
    writer to conflict with."""
    if claim is None or _same(current, incoming):
        return False
    return claim.agent != by.agent or claim.source != by.source


def _weakens(
    claim: ValueProvenance | None,
    by: ValueProvenance,
    policy: ConflictPolicy,
    weigh: Callable[[ValueProvenance], float],
) -> bool:
    """Whether restating a value would hand its claim from another writer to a weaker one. Where the policy
    protects a value (all but last_writer_wins), the stronger claim stays: otherwise a weak writer could restate
    a strong fact, take its claim, and then change it as the claim's own writer or over its own low confidence."""
    if claim is None or policy is ConflictPolicy.LAST_WRITER_WINS:
        return False
    if claim.agent == by.agent and claim.source == by.source:
        return False
    return weigh(by) < weigh(claim)


def _as_given(claim: ValueProvenance) -> float:
    return claim.confidence


def decide(
    current: Mapping[str, Any],
    incoming: Mapping[str, Any],
    by: ValueProvenance,
    policy_of: Callable[[str], ConflictPolicy],
    weigh: Callable[[ValueProvenance], float] = _as_given,
) -> Decision:
    """What a write of `incoming` (claimed `by`) does to a node or relationship holding `current` (its stored
    properties, claims included). `weigh` is a claim's effective confidence (decay, core/decay.py), which
    higher_confidence_wins compares. Raises CONFLICT when a `reject` property would change."""
    write: dict[str, Any] = {}
    conflicts: list[Conflict] = []
    for prop, value in incoming.items():
        claim = parse_claim(current.get(claim_name(prop)))
        if prop not in current or not is_conflict(current[prop], claim, value, by):
            if prop not in current or not _weakens(claim, by, policy_of(prop), weigh):
                write[prop] = value
            continue
        assert claim is not None  # is_conflict says so
        policy = policy_of(prop)
        if policy is ConflictPolicy.LAST_WRITER_WINS or (
            policy is ConflictPolicy.HIGHER_CONFIDENCE_WINS and weigh(by) >= weigh(claim)
        ):
            write[prop] = value
            outcome = Outcome.OVERWRITTEN
        elif policy is ConflictPolicy.KEEP_BOTH:
            outcome = Outcome.OPEN
        else:
            outcome = Outcome.KEPT
        conflicts.append(Conflict(prop, policy, outcome, current[prop], claim, value, by))
    refused = [c for c in conflicts if c.policy is ConflictPolicy.REJECT]
    if refused:
        raise GateRejection(
            ErrorCode.CONFLICT,
            f"{', '.join(c.property for c in refused)} would change a value another writer claims",
            conflicts=[
                {"property": c.property, "current_value": c.current_value, "current": c.current.model_dump()}
                for c in refused
            ],
        )
    return Decision(write, conflicts)

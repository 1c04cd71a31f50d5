"""Conflict policies (core.conflicts): what a write does to a value another writer claims, decided purely."""

import pytest

from write_gate.core.claims import ValueProvenance, claim_name
from write_gate.core.conflicts import (
    ConflictPolicy,
    Outcome,
    decide,
    is_conflict,
)
from write_gate.core.model import ErrorCode, GateRejection

API = ValueProvenance(
    agent="api-bot", source="api", extraction_method="manual", confidence=0.75, at="2026-01-01T00:00:00.000Z"
)
LLM = ValueProvenance(
    agent="llm-bot", source="llm", extraction_method="llm", confidence=0.06, at="2026-01-02T00:00:00.000Z"
)
# The case: age 36 from the api at 0.75, then 99 from an llm at 0.06.
ALICE = {"name": "Alice", "age": 36, claim_name("age"): ["api-bot", "api", "manual", 0.75, "2026-01-01T00:00:00.000Z"]}


def policy(p: ConflictPolicy):  # noqa: ANN201 - a policy_of for every property
    return lambda _prop: p


def test_a_conflict_is_a_changed_value_over_another_agent_or_source() -> None:
    assert is_conflict(36, API, 99, LLM)
    assert not is_conflict(36, API, 36, LLM)  # the same value: agreement, not a conflict
    assert not is_conflict(36, API, 37, API)  # the same agent and source correcting itself
    assert is_conflict(36, API, 37, API.model_copy(update={"source": "hr"}))  # same agent, another source
    assert is_conflict(36, API, 37, API.model_copy(update={"agent": "other"}))
    assert not is_conflict(36, None, 99, LLM)  # a value written before claims has no writer
    assert is_conflict(36, API, 36.0, LLM)  # 36.0 is another value (type counts, as for merge keys)


def test_last_writer_wins_writes_and_records() -> None:
    d = decide(ALICE, {"age": 99, "nickname": "Al"}, LLM, policy(ConflictPolicy.LAST_WRITER_WINS))
    assert d.write == {"age": 99, "nickname": "Al"} and d.held == {}
    [c] = d.conflicts
    assert (c.property, c.outcome, c.current, c.incoming) == ("age", Outcome.OVERWRITTEN, API, LLM)
    assert (c.current_value, c.incoming_value) == (36, 99)


def test_higher_confidence_wins_keeps_the_surer_value() -> None:
    d = decide(ALICE, {"age": 99}, LLM, policy(ConflictPolicy.HIGHER_CONFIDENCE_WINS))
    assert d.write == {} and [c.outcome for c in d.conflicts] == [Outcome.KEPT]
    surer = LLM.model_copy(update={"confidence": 0.9})
    assert decide(ALICE, {"age": 99}, surer, policy(ConflictPolicy.HIGHER_CONFIDENCE_WINS)).write == {"age": 99}
    tie = LLM.model_copy(update={"confidence": 0.75})  # a tie goes to the newer
    assert decide(ALICE, {"age": 99}, tie, policy(ConflictPolicy.HIGHER_CONFIDENCE_WINS)).write == {"age": 99}


def test_reject_refuses_the_whole_write_with_the_current_value_and_its_claim() -> None:
    with pytest.raises(GateRejection) as caught:
        decide(ALICE, {"age": 99, "nickname": "Al"}, LLM, policy(ConflictPolicy.REJECT))
    rejected = caught.value.rejected
    assert rejected.error_code is ErrorCode.CONFLICT
    assert rejected.details == {"conflicts": [{"property": "age", "current_value": 36, "current": API.model_dump()}]}


def test_higher_confidence_wins_compares_effective_confidences() -> None:
    # A stale strong claim (decayed below the fresh one) loses; the same claims without decay keep it.
    fresh = LLM.model_copy(update={"confidence": 0.5})
    stale = {"api-bot": 0.1}

    def weigh(claim: ValueProvenance) -> float:
        return stale.get(claim.agent, claim.confidence)

    d = decide(ALICE, {"age": 99}, fresh, policy(ConflictPolicy.HIGHER_CONFIDENCE_WINS), weigh)
    assert d.write == {"age": 99} and [c.outcome for c in d.conflicts] == [Outcome.OVERWRITTEN]
    assert decide(ALICE, {"age": 99}, fresh, policy(ConflictPolicy.HIGHER_CONFIDENCE_WINS)).write == {}


def test_keep_both_holds_the_incoming_value_and_leaves_the_conflict_open() -> None:
    d = decide(ALICE, {"age": 99, "nickname": "Al"}, LLM, policy(ConflictPolicy.KEEP_BOTH))
    assert d.write == {"nickname": "Al"} and d.held == {"age": 99}
    assert [c.outcome for c in d.conflicts] == [Outcome.OPEN]


def test_policies_apply_per_property() -> None:
    current = {**ALICE, "role": "x", claim_name("role"): ALICE[claim_name("age")]}
    policies = {"age": ConflictPolicy.HIGHER_CONFIDENCE_WINS, "role": ConflictPolicy.LAST_WRITER_WINS}
    d = decide(current, {"age": 99, "role": "y"}, LLM, policies.__getitem__)
    assert d.write == {"role": "y"} and {c.property: c.outcome for c in d.conflicts} == {
        "age": Outcome.KEPT,
        "role": Outcome.OVERWRITTEN,
    }


def test_restating_the_value_another_writer_claims_is_no_conflict() -> None:
    decision = decide(
        ALICE, {"age": 36}, API.model_copy(update={"agent": "hr-bot", "confidence": 0.9}), policy(ConflictPolicy.REJECT)
    )
    assert decision.write == {"age": 36} and decision.conflicts == []


@pytest.mark.parametrize(
    "protecting", [ConflictPolicy.REJECT, ConflictPolicy.HIGHER_CONFIDENCE_WINS, ConflictPolicy.KEEP_BOTH]
)
def test_a_weaker_writer_restating_a_protected_value_leaves_its_claim_alone(protecting: ConflictPolicy) -> None:
    # Found by a black-box audit: the llm restated the api's 36, took its claim (0.06), then changed it to 99 as
    # the claim's own writer (no conflict) or over its own low confidence.
    restated = decide(ALICE, {"age": 36, "nickname": "Al"}, LLM, policy(protecting))
    assert restated.write == {"nickname": "Al"} and restated.conflicts == []
    # The writer's own restatement, and any restatement under last_writer_wins, still takes the claim.
    assert decide(ALICE, {"age": 36}, API.model_copy(update={"confidence": 0.1}), policy(protecting)).write == {
        "age": 36
    }
    assert decide(ALICE, {"age": 36}, LLM, policy(ConflictPolicy.LAST_WRITER_WINS)).write == {"age": 36}


def test_a_refusal_names_every_refused_property() -> None:
    both = {**ALICE, "city": "Oslo", claim_name("city"): ALICE[claim_name("age")]}
    with pytest.raises(GateRejection) as refused:
        decide(both, {"age": 1, "city": "Rome"}, LLM, lambda _p: ConflictPolicy.REJECT)
    assert refused.value.rejected.message == "age, city would change a value another writer claims"

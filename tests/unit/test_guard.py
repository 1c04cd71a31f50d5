"""A guarded write decided on what its subject held (core.guard): the fast path for a subject that did not exist."""

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from write_gate.core.claims import ValueProvenance
from write_gate.core.conflicts import decide
from write_gate.core.decay import parse_at, weigher
from write_gate.core.guard import fresh_write, guard_write, next_weight, revision_of
from write_gate.core.history import Subject, WriteContext, set_changes
from write_gate.core.registry import ConflictPolicy

AT = "2026-11-24T00:00:00.000Z"
LLM = ValueProvenance(agent="llm-bot", source="llm", extraction_method="llm", confidence=0.06, at=AT)
ALICE = Subject.node("Person", '{"name":"Alice"}')
IDENTITY = {"name": "Alice"}

values = st.one_of(st.integers(), st.floats(allow_nan=False), st.text(max_size=5), st.booleans())
properties = st.dictionaries(st.from_regex(r"[a-z]{1,6}", fullmatch=True).filter(lambda k: k != "name"), values)


def guarded(current: dict[str, Any] | None, incoming: dict[str, Any], policy: ConflictPolicy) -> Any:
    ids = iter(f"id{n}" for n in range(100))
    return guard_write(
        ALICE,
        current,
        incoming,
        IDENTITY,
        LLM,
        lambda _p: policy,
        weigher(None, {}, parse_at(AT)),
        "c1",
        lambda: next(ids),
    )


@given(properties)
def test_a_new_subject_is_decided_as_the_general_path_decides_an_empty_one(incoming: dict[str, Any]) -> None:
    """What the guard did for an absent subject before it had a path of its own: decide against nothing, record
    the identity and every value, guard on revision 0."""
    decision = decide({}, incoming, LLM, lambda _p: ConflictPolicy.REJECT)
    expected = set_changes(ALICE, None, {**IDENTITY, **decision.write}, WriteContext("c1", AT, 1, LLM))
    out = fresh_write(ALICE, incoming, IDENTITY, LLM, "c1")
    assert (out.write, out.revision, out.changes, out.conflicts, out.met) == (decision.write, 0, expected, [], [])
    assert out.as_guard(True).params() == {
        "revision": 0,
        "fresh": True,
        "changes": expected,
        "conflicts": [],
        "change_id": "c1",
    }


def test_an_absent_subject_has_nothing_to_conflict_with_under_any_policy() -> None:
    for policy in ConflictPolicy:
        out = guarded(None, {"age": 3}, policy)
        assert out.write == {"age": 3} and out.met == [] and out.revision == 0
        [record] = out.changes
        assert record["properties"] == ["name", "age"]


def test_an_existing_subject_still_meets_its_policies() -> None:
    current = {"age": 1, "_p_age": ["api-bot", "api", "api", 0.9, AT], "_rev": 4}
    out = guarded(current, {"age": 2}, ConflictPolicy.KEEP_BOTH)
    assert out.write == {} and out.revision == 4 and [m.outcome for m in out.met] == ["open"]
    assert out.changes == [] and out.conflicts[0]["incoming_value"] == 2


API_CLAIM = ["api-bot", "api", "api", 0.9, AT]
API = ValueProvenance(agent="api-bot", source="api", extraction_method="api", confidence=0.9, at=AT)


def test_an_existing_subject_is_guarded_on_its_revision_with_every_record_exact() -> None:
    """Revision 4 read: the records say revision 5, carry the change id, the subject, the values before and
    after (the computed weight too) and each conflict's own id; the answer lists the conflict met."""
    current = {"age": 1, "_p_age": API_CLAIM, "city": "Oslo", "_rev": 4}
    ids = iter(["k1", "k2"])
    out = guard_write(
        ALICE,
        current,
        {"age": 2, "city": "Rome"},
        IDENTITY,
        LLM,
        lambda _p: ConflictPolicy.LAST_WRITER_WINS,
        lambda claim: claim.confidence,
        "c9",
        lambda: next(ids),
        {"weight": 0.5},
    )
    llm = ["llm-bot", "llm", "llm", 0.06, AT]
    assert out.write == {"age": 2, "city": "Rome"} and out.revision == 4 and out.change_id == "c9"
    assert out.changes == [
        {
            "change_id": "c9",
            "at": AT,
            "seq": AT,
            "revision": 5,
            "op": "set",
            "subject": "node",
            "label": "Person",
            "key": '{"name":"Alice"}',
            "agent": "llm-bot",
            "claim": llm,
            "properties": ["age", "city", "weight"],
            "after_values": [[2], ["Rome"], [0.5]],
            "before_values": [[1], ["Oslo"], []],
            "before_claims": [API_CLAIM, [], []],
        }
    ]
    assert out.conflicts == [
        {
            "conflict_id": "k1",
            "change_id": "c9",
            "at": AT,
            "status": "settled",
            "subject": "node",
            "label": "Person",
            "key": '{"name":"Alice"}',
            "property": "age",
            "policy": "last_writer_wins",
            "outcome": "overwritten",
            "current_value": 1,
            "current_claim": API_CLAIM,
            "incoming_value": 2,
            "incoming_claim": llm,
        }
    ]
    assert [m.model_dump() for m in out.met] == [
        {
            "conflict_id": "k1",
            "property": "age",
            "policy": "last_writer_wins",
            "outcome": "overwritten",
            "current_value": 1,
            "current": API.model_dump(),
        }
    ]
    assert out.as_guard(False).params()["change_id"] == "c9"


def test_the_guard_weighs_claims_with_the_weigher_it_is_given() -> None:
    """higher_confidence_wins compares the weights `weigh` gives, not the confidences as stated."""
    current = {"age": 1, "_p_age": API_CLAIM, "_rev": 1}
    flipped = guard_write(
        ALICE,
        current,
        {"age": 2},
        IDENTITY,
        LLM,
        lambda _p: ConflictPolicy.HIGHER_CONFIDENCE_WINS,
        lambda claim: 1.0 - claim.confidence,  # the low stated confidence weighs more here
        "c1",
        lambda: "k1",
    )
    assert flipped.write == {"age": 2} and [m.outcome for m in flipped.met] == ["overwritten"]


def test_an_absent_subject_is_passed_its_change_id_and_computed_values() -> None:
    out = guard_write(
        ALICE,
        None,
        {"age": 3},
        IDENTITY,
        LLM,
        lambda _p: ConflictPolicy.REJECT,
        weigher(None, {}, parse_at(AT)),
        "c7",
        lambda: "k1",
        {"weight": 1.0},
    )
    [record] = out.changes
    assert out.change_id == "c7" and record["change_id"] == "c7"
    assert record["properties"] == ["name", "age", "weight"] and record["after_values"] == [["Alice"], [3], [1.0]]


def test_a_revision_is_a_stored_integer_else_zero() -> None:
    assert [revision_of(c) for c in (None, {}, {"_rev": 7}, {"_rev": True}, {"_rev": "3"}, {"_rev": 2.0})] == [
        0,
        0,
        7,
        0,
        0,
        0,
    ]


def test_a_weight_starts_at_the_one_given_else_one_and_then_averages() -> None:
    assert next_weight(None, None, True) == 1.0
    assert next_weight(None, 0.4, True) == 0.4
    assert next_weight(0.6, 0.4, True) == 0.6  # fresh: the stored one (a race re-read) stands
    assert next_weight(0.6, None, False) == 0.6  # nothing given: unchanged
    assert next_weight(None, None, False) == 1.0
    assert next_weight(None, 0.4, False) == 0.7  # (1.0 + 0.4) / 2
    assert next_weight(0.6, 0.2, False) == 0.4  # (0.6 + 0.2) / 2
    assert next_weight(True, 0.2, False) == 0.6  # a stored bool is no weight: (1.0 + 0.2) / 2
    assert next_weight("0.5", None, False) == 1.0
    assert next_weight(3, 1.0, False) == 2.0  # an int is a weight

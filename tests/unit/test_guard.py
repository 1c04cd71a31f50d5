"""A guarded write decided on what its subject held (core.guard): the fast path for a subject that did not exist."""

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from write_gate.core.claims import ValueProvenance
from write_gate.core.conflicts import decide
from write_gate.core.decay import parse_at, weigher
from write_gate.core.guard import fresh_write, guard_write
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

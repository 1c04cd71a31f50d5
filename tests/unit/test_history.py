"""Change and conflict records (core.history), built purely: exact maps, one change record per write (its
values in aligned lists), read back one value at a time as the tools answer (absent values left out)."""

import pytest

from write_gate.core.claims import ValueProvenance, claim_name
from write_gate.core.conflicts import Conflict, Outcome
from write_gate.core.history import (
    Subject,
    WriteContext,
    conflict_records,
    delete_changes,
    set_changes,
    value_changes,
)
from write_gate.core.registry import ConflictPolicy

AT = "2026-11-24T00:00:00.000Z"
API = ValueProvenance(
    agent="api-bot", source="api", extraction_method="manual", confidence=0.75, at="2026-01-01T00:00:00.000Z"
)
LLM = ValueProvenance(agent="llm-bot", source="llm", extraction_method="llm", confidence=0.06, at=AT)
API_LIST = ["api-bot", "api", "manual", 0.75, "2026-01-01T00:00:00.000Z"]
LLM_LIST = ["llm-bot", "llm", "llm", 0.06, AT]
ALICE = Subject.node("Person", '{"name":"Alice"}')
CTX = WriteContext("c1", AT, 3, LLM)


def test_one_record_per_write_of_every_changed_value_none_for_an_unchanged_one() -> None:
    before = {"age": 36, claim_name("age"): API_LIST, "city": "Oslo", "n": 1, "tags": ["a"]}
    written = {"age": 99, "city": "Oslo", "nick": "Al", "n": 1.0, "tags": ["a", "b"]}
    [record] = set_changes(ALICE, before, written, CTX)
    common = {"change_id": "c1", "at": AT, "seq": AT, "revision": 3, "op": "set", "subject": "node"}
    common |= {"label": "Person", "key": '{"name":"Alice"}', "agent": "llm-bot", "claim": LLM_LIST}
    assert record == {
        **common,
        "properties": ["age", "nick", "n", "tags"],
        "before_values": [[36], [], [1], [["a"]]],  # [] for none, else the value in a list of one
        "after_values": [[99], ["Al"], [1.0], [["a", "b"]]],
        "before_claims": [API_LIST, [], [], []],
    }
    assert value_changes(record) == [
        {**common, "property": "age", "before": 36, "after": 99, "before_claim": API_LIST},
        {**common, "property": "nick", "after": "Al"},  # new: no before, no before_claim
        {**common, "property": "n", "before": 1, "after": 1.0},  # 1.0 is another value than 1
        {**common, "property": "tags", "before": ["a"], "after": ["a", "b"]},
    ]
    assert set_changes(ALICE, before, {"city": "Oslo"}, CTX) == []  # nothing changed: no record


def test_a_record_of_the_one_value_form_reads_as_itself() -> None:
    old = {"change_id": "c0", "at": AT, "op": "set", "subject": "node", "label": "Person", "property": "age"}
    assert value_changes({**old, "after": 3}) == [{**old, "after": 3}]


def test_a_new_subject_records_every_value() -> None:
    [record] = set_changes(ALICE, None, {"name": "Alice", "age": 1}, CTX)
    assert [c["property"] for c in value_changes(record)] == ["name", "age"]


def test_a_relationship_subject_names_both_endpoints() -> None:
    subject = Subject.relationship("KNOWS", "Person", "k1", "Person", "k2")
    [record] = set_changes(subject, {}, {"since": 2020}, CTX)
    assert {k: record[k] for k in ("subject", "label", "from_label", "from_key", "to_label", "to_key")} == {
        "subject": "relationship",
        "label": "KNOWS",
        "from_label": "Person",
        "from_key": "k1",
        "to_label": "Person",
        "to_key": "k2",
    }
    assert "key" not in record


def test_a_delete_keeps_every_value_with_its_claim_and_nothing_gate_owned() -> None:
    before = {"age": 36, claim_name("age"): API_LIST, "name": "Alice", "_key": "k", "_f_name": ["alice"], "x": None}
    [record] = delete_changes(ALICE, before, "c2", AT, "admin-bot", revision=4)
    common = {"change_id": "c2", "at": AT, "seq": AT, "revision": 4, "op": "delete", "subject": "node"}
    common |= {"label": "Person", "key": '{"name":"Alice"}', "agent": "admin-bot"}
    assert record == {
        **common,
        "properties": ["age", "name"],
        "before_values": [[36], ["Alice"]],
        "after_values": [[], []],
        "before_claims": [API_LIST, []],
    }
    assert delete_changes(ALICE, {"_key": "k"}, "c3", AT, "admin-bot") == []  # nothing held: no record
    assert value_changes(record) == [
        {**common, "property": "age", "before": 36, "before_claim": API_LIST},
        {**common, "property": "name", "before": "Alice"},
    ]


def test_conflict_records_are_open_for_keep_both_and_settled_otherwise() -> None:
    conflicts = [
        Conflict("age", ConflictPolicy.KEEP_BOTH, Outcome.OPEN, 36, API, 99, LLM),
        Conflict("city", ConflictPolicy.LAST_WRITER_WINS, Outcome.OVERWRITTEN, "Oslo", API, "Rome", LLM),
    ]
    open_, settled = conflict_records(ALICE, conflicts, CTX.change_id, CTX.at, ["x1", "x2"])
    assert open_ == {
        "conflict_id": "x1",
        "change_id": "c1",
        "at": AT,
        "status": "open",
        "subject": "node",
        "label": "Person",
        "key": '{"name":"Alice"}',
        "property": "age",
        "policy": "keep_both",
        "outcome": "open",
        "current_value": 36,
        "current_claim": API_LIST,
        "incoming_value": 99,
        "incoming_claim": LLM_LIST,
    }
    assert (settled["status"], settled["outcome"], settled["policy"]) == ("settled", "overwritten", "last_writer_wins")


def test_a_record_with_shorter_lists_reads_as_absent_values() -> None:
    """A record whose after_values or claims lists are shorter than its properties (none written after them):
    the missing entries are absent, and the record's own claim stands for a missing claim."""
    record = {"change_id": "c1", "at": AT, "op": "set", "subject": "node", "label": "P", "claim": LLM_LIST}
    record |= {"properties": ["a", "b"], "after_values": [[1]], "claims": [API_LIST]}
    assert value_changes(record) == [
        {"change_id": "c1", "at": AT, "op": "set", "subject": "node", "label": "P", "property": "a", "after": 1}
        | {"claim": API_LIST},
        {"change_id": "c1", "at": AT, "op": "set", "subject": "node", "label": "P", "property": "b"}
        | {"claim": LLM_LIST},
    ]


def test_each_conflict_needs_its_own_id() -> None:
    conflict = Conflict("age", ConflictPolicy.KEEP_BOTH, Outcome.OPEN, 36, API, 99, LLM)
    with pytest.raises(ValueError):
        conflict_records(ALICE, [conflict, conflict], CTX.change_id, CTX.at, ["x1"])

"""The quarantine's pure decisions: which rejections are kept, what they concerned, how an entry is stored."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from write_gate.core.model import ErrorCode
from write_gate.core.quarantine import (
    MAX_NAMES,
    TRANSIENT_CODES,
    arguments_text,
    concerned_names,
    entry_record,
    is_kept,
    parse_arguments,
    rejected_calls,
    replay_arrival,
    storable_text,
)


def test_lasting_rejections_are_kept_and_transient_ones_are_not() -> None:
    lasting = {code for code in ErrorCode if code.value not in TRANSIENT_CODES}
    assert all(is_kept(code) for code in lasting)
    assert {"SCHEMA_UNKNOWN_LABEL", "PERMISSION_DENIED", "CONFLICT", "INVALID_INPUT"} <= lasting
    for code in ("BACKEND_UNAVAILABLE", "INTERNAL_ERROR", "SCHEMA_SOURCE_UNAVAILABLE", "RATE_LIMITED", None, ""):
        assert not is_kept(code)


def test_the_names_a_call_concerned_come_from_the_tool_the_rejection_and_the_arguments() -> None:
    arguments = {"type": "OWNS", "from_label": ":Person", "to_label": "Vehicle", "properties": {"label": "x"}}
    assert concerned_names(arguments, {"type": "OWNS"}) == ["OWNS", "Person", "Vehicle"]
    assert concerned_names({}, {}, "Npc") == ["Npc"]
    batch = {"items": [{"label": "Vehicle"}, {"label": "Boat"}, "not an item"]}
    assert concerned_names(batch, {}) == ["Boat", "Vehicle"]
    memory = {"entities": [{"name": "a", "entityType": "person"}], "relations": [{"relationType": "knows"}]}
    assert concerned_names(memory, {}) == ["knows", "person"]
    assert concerned_names({"label": 3, "type": ":"}, {"label": None}) == []  # no name in them


def test_a_call_names_at_most_so_many() -> None:
    many = {"items": [{"label": f"L{n:03}"} for n in range(100)]}
    assert len(concerned_names(many, {})) == MAX_NAMES


# Small nests (max_leaves): what matters is any text (NUL, lone surrogates) at any depth, and unbounded nesting made
# generation slow enough to fail Hypothesis's health check on a loaded machine.
SCALARS = st.none() | st.booleans() | st.integers() | st.text()


@given(st.dictionaries(st.text(), st.recursive(SCALARS, st.lists, max_leaves=8), max_size=6))
def test_arguments_come_back_exactly_as_sent(arguments: dict) -> None:
    assert parse_arguments(arguments_text(arguments)) == arguments


def test_text_that_is_not_an_object_replays_with_no_arguments() -> None:
    assert parse_arguments("[1]") == {} and parse_arguments("{") == {} and parse_arguments(None) == {}


def test_an_entry_leaves_out_what_it_does_not_have() -> None:
    record = entry_record(
        entry_id="i",
        seq=1,
        at="t",
        tool="write_node",
        arguments="{}",
        agent="a",
        source=None,
        error_code="CONFLICT",
        message="m",
        labels=[],
    )
    assert "source" not in record and "labels" not in record
    assert record["error_code"] == "CONFLICT" and record["seq"] == 1


def test_a_rejected_call_is_kept_whole_and_a_batch_by_its_rejected_items() -> None:
    rejection = {"error_code": "SCHEMA_UNKNOWN_LABEL", "message": "m", "details": {"label": "Vehicle"}}
    [whole] = rejected_calls("add_npc", {"name": "x"}, rejection, True, "Npc")
    assert (whole.tool, whole.arguments, whole.tool_label) == ("add_npc", {"name": "x"}, "Npc")
    assert rejected_calls("write_node", {}, {"error_code": "BACKEND_UNAVAILABLE"}, True, None) == []
    items = [{"label": "Person"}, {"label": "Vehicle"}, {"label": "Boat"}]
    answer = {
        "items": [
            {"index": 0, "status": "written"},
            {"index": 1, "status": "rejected", **rejection},
            {"index": 2, "status": "rejected", "error_code": "BACKEND_UNAVAILABLE"},  # transient: not kept
            {"index": 9, "status": "rejected", **rejection},  # no such item
            "not an outcome",
        ]
    }
    [item] = rejected_calls("write_nodes", {"items": items}, answer, False, None)
    assert (item.tool, item.arguments, item.rejection["error_code"]) == ("write_node", items[1], "SCHEMA_UNKNOWN_LABEL")
    assert rejected_calls("write_node", {"items": items}, answer, False, None) == []  # a success of a single call


def test_a_batchs_first_and_last_items_are_kept_and_an_index_past_them_skipped() -> None:
    rejected = {"status": "rejected", "error_code": "SCHEMA_UNKNOWN_LABEL"}
    items = [{"label": "A"}, {"label": "B"}, {"label": "C"}]
    answer = {"items": [{"index": 3, **rejected}, {"index": 0, **rejected}, {"index": 2, **rejected}]}
    found = rejected_calls("write_nodes", {"items": items}, answer, False, None)
    assert [call.arguments for call in found] == [items[0], items[2]]


def test_names_of_one_and_of_the_longest_length_are_kept_colons_alone_dropped() -> None:
    longest = "L" * 128
    arguments = {"items": [{"label": ":Xylo"}, {"label": "A"}, {"label": longest}, {"label": "M" * 129}]}
    assert concerned_names(arguments, {}) == ["A", longest, "Xylo"]


def test_arguments_are_kept_as_sorted_compact_ascii_json() -> None:
    """Sorted (one text for one call, however its keys came), compact, and ASCII: `é`, a NUL and a lone
    surrogate are escaped, so the stored text holds nothing an engine refuses."""
    assert arguments_text({"b": "é\x00", "a": [1, "\ud800"]}) == '{"a":[1,"\\ud800"],"b":"\\u00e9\\u0000"}'


def test_stored_text_has_no_nul_and_no_lone_surrogate() -> None:
    assert storable_text("a\x00b") == "a\ufffdb"
    assert storable_text("x\ud800y") == "x?y"
    assert storable_text("plain é") == "plain é"


@pytest.mark.parametrize("text", [None, "", "{", "[1]", '"x"'])
def test_an_entry_whose_arguments_are_not_a_json_object_replays_with_none(text: str | None) -> None:
    assert parse_arguments(text) == {}


def test_an_entrys_arguments_read_back_as_sent() -> None:
    arguments = {"label": "Person", "merge_keys": {"name": "é"}}
    assert parse_arguments(arguments_text(arguments)) == arguments


def test_an_entry_record_holds_each_field_made_storable_and_leaves_out_what_is_absent() -> None:
    fields = {"entry_id": "e1", "seq": 4, "at": "2026-01-01T00:00:00.000Z", "tool": "write_node", "arguments": "{}"}
    fields |= {"agent": "bot\x00", "error_code": "SCHEMA_UNKNOWN_LABEL", "message": "no label Hu\x00man"}
    kept = entry_record(**fields, source="api\ud800", labels=["Human"])
    assert kept == {
        "id": "e1",
        "seq": 4,
        "at": "2026-01-01T00:00:00.000Z",
        "tool": "write_node",
        "arguments": "{}",
        "agent": "bot\ufffd",
        "source": "api?",
        "error_code": "SCHEMA_UNKNOWN_LABEL",
        "message": "no label Hu\ufffdman",
        "labels": ["Human"],
    }
    assert entry_record(**fields, source=None, labels=[]).keys() == kept.keys() - {"source", "labels"}


def test_a_replay_arrives_in_engine_time_early_and_counts_tries_from_then_to_its_read() -> None:
    """The arrival is the read's engine clock less the whole measured delay, floored to the millisecond (a try in
    the arrival's millisecond counts as at once); the earliest clock where the rows differ. A try before the
    arrival is an earlier replay's; a stamp after the read is another clock's; no stamp, or not a number, is none."""
    arrival = replay_arrival([1_000_050, 1_000_051], elapsed_seconds=0.0405)
    assert arrival is not None and (arrival.arrived, arrival.read) == (1_000_009, 1_000_050)
    tried = {t: arrival.tried_at_once(t) for t in (1_000_008, 1_000_009, 1_000_050, 1_000_051)}
    assert tried == {1_000_008: False, 1_000_009: True, 1_000_050: True, 1_000_051: False}
    assert arrival.tried_at_once(1_000_020.0)  # an engine may answer a float
    assert not any(arrival.tried_at_once(stamp) for stamp in (None, "1000020", True))
    assert replay_arrival([], 0.01) is None  # nothing read: nothing to pass over

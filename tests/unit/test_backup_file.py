"""The backup file's pure half: values JSON cannot carry exactly come back with their type, and a file is checked
whole (header, version, each line, endpoints, the end line's counts) before a restore writes anything."""

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from write_gate.core.backup_file import check_backup, end_line, header_line, node_line, relationship_line
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.core.tagged_values import UntaggableValue, tag, untag

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
stored = st.recursive(scalars, lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=8)


@given(stored)
def test_every_stored_value_comes_back_with_its_type(value) -> None:
    back = untag(json.loads(json.dumps(tag(value), allow_nan=False)))
    assert back == value
    assert json.dumps(back, sort_keys=True) == json.dumps(value, sort_keys=True)  # 1.0 stays a float, 1 an int


def test_what_json_cannot_carry_is_tagged() -> None:
    assert tag(2**60) == {"$int": str(2**60)} and tag(2**53) == 2**53
    assert tag([math.inf, -math.inf]) == [{"$float": "Infinity"}, {"$float": "-Infinity"}]
    assert math.isnan(untag(tag(math.nan)))
    assert tag(-math.nan) == tag(math.nan) == {"$float": "NaN"}  # a NaN's sign is no part of it
    assert tag({"$int": "1"}) == {"$map": {"$int": "1"}}  # a stored map never passes for a tag


def test_a_value_of_no_known_kind_is_refused_not_flattened() -> None:
    with pytest.raises(UntaggableValue):
        tag(object())
    with pytest.raises(ValueError, match="no known value tag"):
        untag({"$date": "2026-01-01"})


def backup(*middle: str, nodes: int, relationships: int) -> list[str]:
    return [header_line("falkordb", "2026-11-24T00:00:00Z"), *middle, end_line(nodes, relationships)]


def test_a_whole_file_reads_back() -> None:
    lines = backup(
        node_line(0, ["Person"], {"name": "Ada", "big": 2**60}),
        node_line(1, [], {}),
        relationship_line(0, 1, "KNOWS", {"weight": 0.5}),
        nodes=2,
        relationships=1,
    )
    contents = check_backup(lines)
    assert [n.labels for n in contents.nodes] == [("Person",), ()]
    assert contents.nodes[0].properties["big"] == 2**60
    assert [(r.start, r.end, r.type) for r in contents.relationships] == [(0, 1, "KNOWS")]


@pytest.mark.parametrize(
    ("lines", "line", "reason"),
    [
        ([], 1, "empty"),
        (['{"format": "other"}'], 1, "format"),
        (backup(node_line(1, ["Person"], {}), nodes=1, relationships=0), 2, "position"),
        (
            backup('{"type": "node", "id": 0, "labels": ["Bad Label"], "properties": {}}', nodes=1, relationships=0),
            2,
            "identifiers",
        ),
        (backup(relationship_line(0, 0, "KNOWS", {}), nodes=0, relationships=1), 2, "earlier in the file"),
        (
            backup(
                '{"type": "node", "id": 0, "labels": [], "properties": {"x": {"$date": 1}}}', nodes=1, relationships=0
            ),
            2,
            "no known value tag",
        ),
        (backup(node_line(0, [], {}), nodes=2, relationships=0), 3, "counts"),
        (backup(nodes=0, relationships=0)[:1], 2, "cut short"),
        ([*backup(nodes=0, relationships=0), node_line(0, [], {})], 3, "after the end"),
    ],
)
def test_a_bad_file_is_refused_naming_its_line(lines: list[str], line: int, reason: str) -> None:
    with pytest.raises(GateRejection) as refused:
        check_backup(lines)
    assert refused.value.rejected.error_code is ErrorCode.INVALID_INPUT
    assert refused.value.rejected.details == {"line": line}
    assert reason in refused.value.rejected.message


HEADER = header_line("falkordb", "2026-11-24T00:00:00Z")
END_EMPTY = end_line(0, 0)
NODE = node_line(0, ["Person"], {})


@pytest.mark.parametrize(
    ("lines", "line", "reason"),
    [
        ([], 1, "the file is empty"),
        (["", "  \n"], 1, "the file is empty"),
        (['{"format": "other"}'], 1, 'the header must say "format": "write-gate/backup"'),
        (['{"format": "write-gate/backup", "version": 2}'], 1, "version 2 is not one this gate reads (1)"),
        (['{"format": "write-gate/backup"}'], 1, "version None is not one this gate reads (1)"),
        (["", "{oops"], 2, "not valid JSON: Expecting property name enclosed in double quotes"),
        (["", "[1]"], 2, "not a JSON object"),
        ([HEADER, '{"type": "node", "id": 0, "labels": [], "properties": []}'], 2, '"properties" is not an object'),
        ([HEADER, '{"type": "node", "id": 0, "labels": "Person"}'], 2, '"labels" must be a list of identifiers'),
        ([HEADER, NODE, relationship_line(0, 0, "Bad Type", {})], 3, '"relationshipType" must be an identifier'),
        ([HEADER, NODE, relationship_line(0, 0, 7, {})], 3, '"relationshipType" must be an identifier'),
        ([HEADER, NODE, relationship_line(0, 1, "KNOWS", {})], 3, '"end" is not the id of a node earlier in the file'),
        (
            [HEADER, NODE, '{"type": "relationship", "start": 0, "end": 0, "relationshipType": "KNOWS"}'],
            3,
            '"properties" is not an object',
        ),
        ([HEADER, '{"type": "edge"}'], 2, '"type" is none of node, relationship, end'),
        ([HEADER, "[" * 100_000 + "]" * 100_000], 2, "nested deeper than any backup's values"),  # a RecursionError
        ([HEADER, end_line(1, 0)], 2, "the end line's counts are not those of the lines before it"),
        ([HEADER, END_EMPTY, "", NODE], 4, "a line after the end line"),
        ([HEADER, NODE], 3, "no end line: the file is cut short"),
    ],
)
def test_each_refusal_names_its_line_and_says_exactly_why(lines: list[str], line: int, reason: str) -> None:
    with pytest.raises(GateRejection) as refused:
        check_backup(lines)
    assert refused.value.rejected.details == {"line": line}
    assert refused.value.rejected.message == f"not a restorable backup: line {line}: {reason}; nothing was written"


def test_blank_lines_are_skipped_and_the_header_and_properties_kept() -> None:
    contents = check_backup(["\n", HEADER, "", NODE, relationship_line(0, 0, "KNOWS", {"w": 0.5}), end_line(1, 1)])
    assert contents.header == {
        "format": "write-gate/backup",
        "version": 1,
        "engine": "falkordb",
        "written_at": "2026-11-24T00:00:00Z",
    }
    assert [r.properties for r in contents.relationships] == [{"w": 0.5}]


def test_lines_are_compact_json_with_text_as_it_is() -> None:
    assert header_line("falkordb", "2026-11-24T00:00:00Z") == (
        '{"format":"write-gate/backup","version":1,"engine":"falkordb","written_at":"2026-11-24T00:00:00Z"}\n'
    )
    assert node_line(0, ["Persön"], {"x": "é"}) == '{"type":"node","id":0,"labels":["Persön"],"properties":{"x":"é"}}\n'


def test_integers_are_plain_up_to_two_to_the_53_either_way() -> None:
    assert [tag(-(2**53)), tag(-5), tag(-(2**53) - 1)] == [-(2**53), -5, {"$int": str(-(2**53) - 1)}]
    assert untag({"$int": "-12"}) == -12


@pytest.mark.parametrize("bad", [{"$int": 5}, {"$int": "X5"}, {"$float": "5"}, {"$int": {"a": 1}}, {"$map": 1}])
def test_a_tag_holding_the_wrong_kind_is_refused(bad: dict) -> None:
    with pytest.raises(ValueError) as refused:
        untag(bad)
    assert str(refused.value) == "an object that is no known value tag ($int, $float, $map)"


def test_an_untaggable_value_names_its_type() -> None:
    with pytest.raises(UntaggableValue) as refused:
        tag({1, 2})
    assert str(refused.value) == "a stored value of type set has no backup form"


def test_a_line_is_strict_json_and_never_holds_a_bare_nan() -> None:
    """Values are tagged before they reach a line; a float that was not is refused, not written as `NaN`, which
    JSON does not have."""
    from write_gate.core.backup_file import _line

    with pytest.raises(ValueError):
        _line({"x": math.nan})

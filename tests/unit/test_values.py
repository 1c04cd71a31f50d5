import pytest

from write_gate.core.model import ErrorCode, GateRejection
from write_gate.core.values import Limits, check_protected, check_storable, clean_map, unstorable, value_kind


@pytest.mark.parametrize(
    "value,kind",
    [
        ("a", "string"),
        (1, "integer"),
        (1.5, "number"),
        (True, "boolean"),
        (["a", "b"], "array<string>"),
        ([1, 2.5], "array<number>"),
        ([], "array<any>"),
        ([True], "array<boolean>"),
    ],
)
def test_kinds(value: object, kind: str) -> None:
    assert value_kind("k", value) == kind


@pytest.mark.parametrize(
    "value",
    [None, {"a": 1}, [1, "a"], [[1]], [None], float("nan"), float("inf"), 2**63, -(2**63) - 1, "a\x00b", [True, 1]],
)
def test_unstorable_values_are_invalid_input(value: object) -> None:
    with pytest.raises(GateRejection) as caught:
        value_kind("k", value)
    assert caught.value.rejected.error_code is ErrorCode.INVALID_INPUT
    assert caught.value.rejected.details["property"] == "k"


def test_int64_edges_are_fine() -> None:
    assert value_kind("k", 2**63 - 1) == "integer" and value_kind("k", -(2**63)) == "integer"


def test_clean_map_normalises_keys_and_refuses_duplicates() -> None:
    assert clean_map({":name": "x"}, "properties") == ({"name": "x"}, {"name": "string"})
    with pytest.raises(GateRejection):
        clean_map({"name": "x", ":name": "y"}, "properties")


def test_protected_fields_listed_sorted() -> None:
    with pytest.raises(GateRejection) as caught:
        check_protected({"source": 1, "ok": 2}, {"_x": 1})
    assert caught.value.rejected.error_code is ErrorCode.SCHEMA_PROTECTED_FIELD
    assert caught.value.rejected.details["fields"] == ["_x", "source"]


def rejected(fn, *args, **kwargs):
    with pytest.raises(GateRejection) as caught:
        fn(*args, **kwargs)
    assert caught.value.rejected.error_code is ErrorCode.INVALID_INPUT
    return caught.value.rejected


@pytest.mark.parametrize("value,got", [(None, "NoneType"), ({"a": 1}, "dict"), ([[1]], "list")])
def test_an_unstorable_type_is_named(value: object, got: str) -> None:
    assert rejected(value_kind, "k", value).details == {"property": "k", "got": got}


def test_string_length_limit_at_n_and_n_plus_one() -> None:
    limits = Limits(max_string_length=3)
    assert value_kind("k", "abc", limits) == "string" and value_kind("k", ["abc"], limits) == "array<string>"
    err = rejected(value_kind, "k", "abcd", limits)
    assert err.message == "property 'k' is over the limit of 3"
    assert err.details == {"limit": "max_string_length", "max": 3, "property": "k"}
    assert rejected(value_kind, "k", ["abcd"], limits).details["limit"] == "max_string_length"


def test_list_length_limit_at_n_and_n_plus_one() -> None:
    limits = Limits(max_list_length=2)
    assert value_kind("k", [1, 2], limits) == "array<integer>"
    err = rejected(value_kind, "k", [1, 2, 3], limits)
    assert err.message == "list property 'k' is over the limit of 2"
    assert err.details == {"limit": "max_list_length", "max": 2, "property": "k"}


def test_property_count_limit_at_n_and_n_plus_one() -> None:
    limits = Limits(max_properties=2)
    assert clean_map({"a": 1, "b": 2}, "properties", limits) == ({"a": 1, "b": 2}, {"a": "integer", "b": "integer"})
    err = rejected(clean_map, {"a": 1, "b": 2, "c": 3}, "properties", limits)
    assert err.message == "properties is over the limit of 2"
    assert err.details == {"limit": "max_properties", "max": 2, "field": "properties"}


def test_the_default_limits() -> None:
    assert Limits() == Limits(max_properties=200, max_string_length=65_536, max_list_length=10_000)
    assert value_kind("k", "x" * 65_536) == "string"
    assert rejected(value_kind, "k", "x" * 65_537).details["max"] == 65_536
    assert value_kind("k", [0] * 10_000) == "array<integer>"
    assert rejected(value_kind, "k", [0] * 10_001).details["max"] == 10_000
    assert len(clean_map({f"p{i}": i for i in range(200)}, "properties")[0]) == 200
    assert rejected(clean_map, {f"p{i}": i for i in range(201)}, "properties").details["max"] == 200


def test_clean_map_passes_its_limits_and_names_what_is_wrong() -> None:
    assert rejected(clean_map, {"k": "ab"}, "properties", Limits(max_string_length=1)).details["property"] == "k"
    assert rejected(clean_map, {"bad key": 1}, "properties").details == {"field": "properties key"}
    assert rejected(clean_map, {"k": None}, "properties").details == {"property": "k", "got": "NoneType"}
    err = rejected(clean_map, {"name": "x", ":name": "y"}, "properties")
    assert err.message == "properties key 'name' is given twice" and err.details == {"property": "name"}


def test_a_protected_field_is_named_without_its_colons_and_all_are_listed() -> None:
    with pytest.raises(GateRejection) as caught:
        check_protected({"::source": 1}, {"_x": 1, "ok": 2})
    assert caught.value.rejected.message == (
        "these fields are computed by the gate and cannot be set by a write: _x, source"
    )
    assert caught.value.rejected.details == {"fields": ["_x", "source"]}
    check_protected({"name": 1, "weight": 0.5})  # a node may have a weight of its own


def test_a_protected_field_is_named_as_written_less_only_its_leading_colons() -> None:
    with pytest.raises(GateRejection) as caught:
        check_protected({"::XRef": 1, "Source": 2}, protected_fields=frozenset({"xref", "source"}))
    assert caught.value.rejected.details == {"fields": ["Source", "XRef"]}


@pytest.mark.parametrize(
    "text,bad", [("ok", False), ("a\x00b", True), ("\ud800", True), ("\udfff", True), ("\ue000", False)]
)
def test_unstorable_text(text: str, bad: bool) -> None:
    assert unstorable(text) is bad


def test_check_storable_finds_any_string_at_any_depth_and_names_where() -> None:
    check_storable({"label": "Person", "props": {"tags": ["a", "b"], "n": 1}})
    cases = [
        ("a\x00", "an argument", ""),
        ({"label": "a\x00"}, "label", "label"),
        ({"props": {"tags": ["ok", "\ud800"]}}, "props.tags[1]", "props.tags[1]"),
        ({"props": {"k\x00": 1}}, "props.k\x00 (the key)", "props.k\x00 (the key)"),
        (["\x00"], "[0]", "[0]"),
    ]
    for arguments, where, field in cases:
        err = rejected(check_storable, arguments)
        assert err.message == f"{where} contains a NUL character or a lone surrogate, which no engine stores"
        assert err.details == {"field": field}


def test_a_nul_in_a_property_value_is_refused() -> None:
    err = rejected(value_kind, "k", "a\x00b")
    assert err.message == "property 'k' contains a NUL character or a lone surrogate, which no engine stores"
    assert err.details == {"property": "k"}

import pytest

from write_gate.core.model import ErrorCode, GateRejection
from write_gate.core.values import check_protected, clean_map, value_kind


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

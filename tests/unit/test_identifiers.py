import pytest

from write_gate.identifiers import is_protected, normalize_identifier, quote, remap_breadcrumb
from write_gate.model import ErrorCode, GateRejection


@pytest.mark.parametrize("raw,expected", [("Person", "Person"), (":Person", "Person"), ("::_x9", "_x9")])
def test_leading_colons_are_stripped(raw: str, expected: str) -> None:
    assert normalize_identifier(raw, "label") == expected


@pytest.mark.parametrize(
    "raw",
    ["", ":", "9Lives", "has space", "back`tick", "Person`) DETACH DELETE n //", "a-b", "Ünïcode", "x" * 129, "a:b"],
)
def test_anything_but_a_plain_identifier_is_invalid_input(raw: str) -> None:
    with pytest.raises(GateRejection) as caught:
        normalize_identifier(raw, "label")
    assert caught.value.rejected.error_code is ErrorCode.INVALID_INPUT


def test_128_characters_is_the_limit() -> None:
    assert normalize_identifier("x" * 128, "label") == "x" * 128


def test_quote_refuses_unvalidated_text() -> None:
    assert quote("Person") == "`Person`"
    with pytest.raises(ValueError):
        quote("a`b")


@pytest.mark.parametrize(
    "key",
    [
        "confidence",
        "source",
        "extraction_method",
        "last_updated",
        "write_gate_version",
        "written_by",
        "_stub",
        "_anything",
    ],
)
def test_protected(key: str) -> None:
    assert is_protected(key)


def test_not_protected() -> None:
    assert not is_protected("name") and not is_protected("confidence_note")


@pytest.mark.parametrize("raw", ["person", ":person", "::person"])
def test_breadcrumb_is_one_colon_plus_label(raw: str) -> None:
    assert remap_breadcrumb(raw) == ":person"

import pytest

from write_gate.core.identifiers import (
    COMPUTED_FIELDS,
    PROTECTED_FIELDS,
    PROTECTED_RELATIONSHIP_FIELDS,
    PROVENANCE_FIELDS,
    as_identifier,
    is_protected,
    normalize_identifier,
    quote,
    remap_breadcrumb,
    string_literal,
    written_label,
)
from write_gate.core.model import ErrorCode, GateRejection


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
    with pytest.raises(ValueError, match="^refusing to quote an unvalidated identifier: 'a`b'$"):
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


def test_one_list_of_computed_fields_gives_the_stamps_and_the_protection() -> None:
    # The stamping order is the statements' (golden files pin it); a relationship's weight is protected on
    # relationships only, where the gate computes it: a node may have a weight of its own.
    assert PROVENANCE_FIELDS == (
        "confidence",
        "source",
        "extraction_method",
        "write_gate_version",
        "written_by",
        "last_updated",
        "updated_by",
    )
    assert PROTECTED_RELATIONSHIP_FIELDS == set(COMPUTED_FIELDS) == PROTECTED_FIELDS | {"weight"}
    assert is_protected("Weight", PROTECTED_RELATIONSHIP_FIELDS) and not is_protected("weight")


@pytest.mark.parametrize("raw", ["person", ":person", "::person"])
def test_breadcrumb_is_one_colon_plus_label(raw: str) -> None:
    assert remap_breadcrumb(raw) == ":person"


@pytest.mark.parametrize(
    "breadcrumb, written", [(":company", "company"), ("company", "company"), (":", None), (None, None), (["x"], None)]
)
def test_the_type_as_written_is_read_back_from_its_breadcrumb(breadcrumb: object, written: str | None) -> None:
    assert written_label(breadcrumb) == written
    assert written_label(remap_breadcrumb("company")) == "company"


def test_a_bad_identifier_names_the_field() -> None:
    with pytest.raises(GateRejection) as caught:
        normalize_identifier("a b", "merge_keys key")
    assert caught.value.rejected.details == {"field": "merge_keys key"}


@pytest.mark.parametrize("raw", ["X_ray", ":X_ray", "::X_ray"])
def test_only_colons_are_stripped(raw: str) -> None:
    # A name that starts with another character keeps it, everywhere names are read.
    assert normalize_identifier(raw, "label") == "X_ray"
    assert remap_breadcrumb(raw) == ":X_ray"
    assert not is_protected(":Xsource") and is_protected(":source")


@pytest.mark.parametrize(
    "text,name",
    [
        ("works at", "works_at"),
        ("  reports-to  ", "reports_to"),
        ("_X-ray_", "X_ray"),
        ("1st place", "_1st_place"),
        ("9", "_9"),
        ("", None),
        ("!!!", None),
        ("é", None),
        ("x" * 129, None),
    ],
)
def test_free_text_as_an_identifier(text: str, name: str | None) -> None:
    assert as_identifier(text) == name


def test_a_string_literal_is_only_ever_an_identifier_in_quotes() -> None:
    assert string_literal("_search") == "'_search'"
    with pytest.raises(ValueError, match=r"^not an identifier: \"a'b\"$"):
        string_literal("a'b")

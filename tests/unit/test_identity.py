"""Identity keys and search folding, without an engine: the properties they must have on every input."""

import json
import math
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from write_gate.core.identity import (
    HASHED_KEY_PREFIX,
    MAX_PLAIN_KEY,
    SEPARATOR,
    fold,
    folded_properties,
    folded_value,
    identity_key,
    keys_displayed_as,
    label_fold,
)

scalars = st.one_of(
    st.text(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
)
key_maps = st.dictionaries(st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True), scalars, min_size=1, max_size=3)


@given(key_maps)
def test_a_key_never_starts_or_ends_with_white_space_and_is_ascii(keys: dict) -> None:
    key = identity_key(keys)
    assert key[0] in "{#" and key[-1] not in " \t\n" and key.isascii() and len(key) <= 1024


@given(key_maps)
def test_a_key_reads_back_as_its_merge_keys(keys: dict) -> None:
    key = identity_key(keys)
    if key.startswith(HASHED_KEY_PREFIX):
        return  # a long key is hashed (test below)
    decoded = json.loads(key)
    assert decoded.keys() == keys.keys()
    for name, value in keys.items():
        assert decoded[name] == value and (isinstance(decoded[name], bool) == isinstance(value, bool))


@given(key_maps, key_maps)
def test_different_merge_keys_have_different_keys(a: dict, b: dict) -> None:
    same = a.keys() == b.keys() and all(type(a[k]) is type(b[k]) and a[k] == b[k] for k in a)
    if not same and not any(isinstance(v, float) for v in (*a.values(), *b.values())):
        assert identity_key(a) != identity_key(b)


def test_a_long_key_is_hashed_to_a_short_one_that_stays_distinct() -> None:
    long, longer = identity_key({"name": "x" * 5000}), identity_key({"name": "x" * 5001})
    assert long.startswith(HASHED_KEY_PREFIX) and len(long) == len(HASHED_KEY_PREFIX) + 64 and long != longer
    assert identity_key({"name": "x" * 1000}).startswith("{")


def test_the_order_of_keys_does_not_matter() -> None:
    assert identity_key({"a": 1, "b": "x"}) == identity_key({"b": "x", "a": 1})


def test_equal_in_cypher_is_one_key_and_different_types_are_two() -> None:
    assert identity_key({"n": 1}) == identity_key({"n": 1.0})
    assert identity_key({"n": True}) != identity_key({"n": 1})
    assert identity_key({"n": "1"}) != identity_key({"n": 1})


def test_white_space_and_normalisation_forms_are_kept_apart() -> None:
    texts = ["Alice", " Alice", "Alice ", "", " ", "\t", unicodedata.normalize("NFD", "Émile"), "Émile"]
    assert len({identity_key({"name": t}) for t in texts}) == len(texts)


def test_fold_is_full_unicode_case_folding() -> None:
    assert fold("ΣΊΣΥΦΟΣ") == fold("σίσυφος")
    assert fold("İstanbul") in fold("Ankara, İstanbul")
    assert fold("STRASSE") == fold("straße")
    assert fold("ｆｕｌｌｗｉｄｔｈ") == "fullwidth"


@given(st.text())
def test_folded_text_never_holds_the_separator(text: str) -> None:
    assert SEPARATOR not in fold(text)


def test_a_key_is_plain_up_to_its_limit_and_hashed_past_it() -> None:
    # '{"name":"' + text + '"}' is the text's length plus 11.
    at_limit = identity_key({"name": "x" * (MAX_PLAIN_KEY - 11)})
    assert len(at_limit) == MAX_PLAIN_KEY and at_limit.startswith('{"name":"x')
    past = identity_key({"name": "x" * (MAX_PLAIN_KEY - 10)})
    assert past.startswith(HASHED_KEY_PREFIX) and len(past) == len(HASHED_KEY_PREFIX) + 64


def test_whole_floats_are_integers_only_inside_the_64_bit_range() -> None:
    assert identity_key({"n": 3.0}) == '{"n":3}' and identity_key({"n": -(2.0**62)}) == '{"n":-4611686018427387904}'
    assert identity_key({"n": 2.0**63}) == '{"n":9.223372036854776e+18}'
    assert identity_key({"n": 2.5}) == '{"n":2.5}'


@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_no_key_for_a_value_no_engine_compares(value: float) -> None:
    with pytest.raises(ValueError):
        identity_key({"n": value})


def test_fold_turns_control_characters_into_spaces() -> None:
    assert fold("Line\nTWO\tthree\x07") == "line two three "


def test_folded_values_align_with_text_values_only() -> None:
    assert folded_value("ÉMILE") == ["émile"]
    assert folded_value(["A", "Straße"]) == ["a", "strasse"]
    assert folded_value([]) is None and folded_value(["a", 1]) is None and folded_value(7) is None


def test_folded_properties_clear_what_has_no_text() -> None:
    assert folded_properties({"name": "Ada", "tags": ["X", "y"]}, {"age": 3}) == {
        "_f_name": ["ada"],
        "_f_tags": ["x", "y"],
        "_f_age": [],
    }


def test_label_fold_adds_the_label_as_written() -> None:
    assert label_fold("Person", None) == ["person"]
    assert label_fold("Element", "::Xenon") == ["element", "xenon"]


def test_a_node_named_by_its_keys_is_found_by_every_value_its_name_may_stand_for() -> None:
    assert keys_displayed_as("title=Launch") == [identity_key({"title": "Launch"})]
    assert keys_displayed_as("id=5") == [identity_key({"id": "5"}), identity_key({"id": 5})]
    assert identity_key({"flag": True}) in keys_displayed_as("flag=True")
    assert identity_key({"w": 1.5}) in keys_displayed_as("w=1.5")
    assert keys_displayed_as("w=inf") == [identity_key({"w": "inf"})]  # no JSON number: the text alone
    both = keys_displayed_as("country=US,name=Springfield")
    assert identity_key({"name": "Springfield", "country": "US"}) in both
    assert keys_displayed_as("Alice") == [] and keys_displayed_as("=x") == [] and keys_displayed_as("a=1,b") == []

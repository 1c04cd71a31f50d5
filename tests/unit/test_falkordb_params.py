"""FalkorDB's parameter header (engines/falkordb_params.py): every value as the falkordb client writes it, read
back alike by the engine (tests/integration/test_engine.py sends these values through both)."""

import pytest
from falkordb.helpers import stringify_param_value
from hypothesis import given
from hypothesis import strategies as st

from write_gate.engines.falkordb_params import literal, params_header

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True), inner),
    ),
    max_leaves=12,
)


def test_strings_are_quoted_as_the_engine_reads_them() -> None:
    assert literal('a "b" \\ c\nd\te é') == '"a \\"b\\" \\\\ c\\nd\\te é"'
    # A control character json would write as \\u0001, which FalkorDB does not read: quoted as the client does.
    assert literal("x\x01y") == stringify_param_value("x\x01y")
    assert literal([True, None, 1.5, 2, {"k": "v"}]) == '[true,null,1.5,2,{`k`:"v"}]'
    assert params_header({"a": 1, "b": "x"}) == 'CYPHER `a`=1 `b`="x" '
    assert params_header({}) == ""


def test_a_key_the_client_refuses_is_refused() -> None:
    for bad in ("", "a`b"):
        with pytest.raises(ValueError):
            params_header({bad: 1})
        with pytest.raises(ValueError):
            literal({bad: 1})


@given(values)
def test_every_value_reads_as_the_clients_form_does(value: object) -> None:
    """The same text as the client's, but for the spelling of booleans (`true`, the client `True`: FalkorDB reads
    both) and of strings it escapes more (FalkorDB reads both to the same string: the integration test)."""
    if isinstance(value, str) or any(isinstance(value, kind) for kind in (list, dict)):
        return  # strings differ in their escapes by design; compared on the engine
    assert literal(value).lower() == stringify_param_value(value).lower()


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1), st.lists(scalars, max_size=3))
def test_a_list_of_floats_is_written_as_value_by_value(floats: list[float], rest: list[object]) -> None:
    """A list of floats alone (an embedding) is written in one pass; one that holds anything else after its first
    float, value by value: both the same text as each value's literal."""
    for items in (floats, floats + rest):
        assert literal(items) == "[" + ",".join(literal(v) for v in items) + "]"

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from write_gate.core.formula import DefaultFormulaProvider, FlatFormulaProvider, compute_confidence, load_provider
from write_gate.core.model import ErrorCode, GateRejection


@pytest.mark.parametrize(
    "reliability,method,expected",
    [(0.9, "manual", 0.675), (1.0, "api", 1.0), (0.5, "llm", 0.3), (1.0, "parsed", 0.85), (0.0, "api", 0.0)],
)
def test_default_weights(reliability: float, method: str, expected: float) -> None:
    assert compute_confidence(DefaultFormulaProvider(), reliability, method) == pytest.approx(expected)


def test_exact_seed_value() -> None:
    assert compute_confidence(DefaultFormulaProvider(), 0.9, "manual") == 0.9 * 0.75 == 0.675


@pytest.mark.parametrize(
    "reliability,method,expected", [(0.8, "manual", 0.6), (0.3, "manual", 0.225), (1 / 3, "api", 0.333333333333)]
)
def test_confidence_is_rounded_to_fixed_decimals(reliability: float, method: str, expected: float) -> None:
    # Exact equality on purpose: 0.8 x 0.75 is 0.6000000000000001 in floating point, and the answer must say 0.6.
    assert compute_confidence(DefaultFormulaProvider(), reliability, method) == expected


def test_a_providers_own_precision_is_kept() -> None:
    """Only the arithmetic's noise is rounded off: a custom provider's 0.0740740734 is what the graph holds."""

    class Thirds:
        def allowed_extraction_methods(self) -> set[str]:
            return {"llm"}

        def compute(self, reliability: float, extraction_method: str) -> float:
            return reliability * 0.3333333333

    assert compute_confidence(Thirds(), 0.7, "llm") == 0.23333333331
    assert compute_confidence(DefaultFormulaProvider(), 0.123456789, "llm") == 0.074074073400


@pytest.mark.parametrize("reliability,clamped", [(-3.0, 0.0), (7.0, 1.0)])
def test_reliability_is_clamped_before_the_provider(reliability: float, clamped: float) -> None:
    assert compute_confidence(DefaultFormulaProvider(), reliability, "api") == clamped


@given(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(sorted(DefaultFormulaProvider.WEIGHTS)))
def test_any_finite_reliability_gives_confidence_in_unit_interval(reliability: float, method: str) -> None:
    assert 0.0 <= compute_confidence(DefaultFormulaProvider(), reliability, method) <= 1.0


def test_unknown_method() -> None:
    with pytest.raises(GateRejection) as caught:
        compute_confidence(DefaultFormulaProvider(), 0.5, "guess")
    assert caught.value.rejected.error_code is ErrorCode.INVALID_EXTRACTION_METHOD
    assert caught.value.rejected.details["allowed"] == ["api", "llm", "manual", "parsed"]


def test_nan_reliability_is_invalid_input() -> None:
    with pytest.raises(GateRejection) as caught:
        compute_confidence(DefaultFormulaProvider(), math.nan, "api")
    assert caught.value.rejected.error_code is ErrorCode.INVALID_INPUT


class Broken:
    def __init__(self, value: object) -> None:
        self.value = value

    def allowed_extraction_methods(self) -> set[str]:
        return {"api"}

    def compute(self, reliability: float, extraction_method: str) -> float:
        if isinstance(self.value, Exception):
            raise self.value
        return self.value  # type: ignore[return-value]


@pytest.mark.parametrize("value", [1.5, -0.1, math.nan, "0.5", True, RuntimeError("boom")])
def test_provider_output_outside_contract(value: object) -> None:
    with pytest.raises(GateRejection) as caught:
        compute_confidence(Broken(value), 0.5, "api")
    assert caught.value.rejected.error_code is ErrorCode.FORMULA_INVALID_OUTPUT


def test_flat_provider_passes_reliability_through() -> None:
    assert compute_confidence(FlatFormulaProvider(), 0.42, "llm") == 0.42


def test_load_provider() -> None:
    assert isinstance(load_provider("default"), DefaultFormulaProvider)
    assert isinstance(load_provider("flat"), FlatFormulaProvider)
    assert isinstance(load_provider("write_gate.core.formula:FlatFormulaProvider"), FlatFormulaProvider)
    with pytest.raises(ValueError):
        load_provider("nonsense")
    with pytest.raises(TypeError):
        load_provider("builtins:object")


def test_nan_reliability_names_the_field_and_infinities_clamp() -> None:
    with pytest.raises(GateRejection) as caught:
        compute_confidence(DefaultFormulaProvider(), math.nan, "api")
    assert caught.value.rejected.message == "reliability must be a number, not NaN"
    assert caught.value.rejected.details == {"field": "reliability"}
    # Seed 003: reliability is clamped to [0.0, 1.0]; JSON's 1e999 reads as infinity.
    assert compute_confidence(DefaultFormulaProvider(), math.inf, "api") == 1.0
    assert compute_confidence(DefaultFormulaProvider(), -math.inf, "api") == 0.0


def test_a_failing_provider_is_named_with_its_error() -> None:
    with pytest.raises(GateRejection) as caught:
        compute_confidence(Broken(RuntimeError("boom")), 0.5, "api")
    assert caught.value.rejected.message == "formula provider failed: RuntimeError"
    assert caught.value.rejected.details == {"provider_error": "boom"}


def test_an_output_outside_the_unit_interval_is_reported_as_returned() -> None:
    with pytest.raises(GateRejection) as caught:
        compute_confidence(Broken(1.5), 0.5, "api")
    assert caught.value.rejected.message == "formula provider returned a confidence outside [0.0, 1.0]"
    assert caught.value.rejected.details == {"returned": 1.5}  # the number, as a test of seed 003 compares it
    for odd, text in ((math.nan, "nan"), (math.inf, "inf"), ("0.5", "'0.5'")):
        with pytest.raises(GateRejection) as caught:
            compute_confidence(Broken(odd), 0.5, "api")
        assert caught.value.rejected.details == {"returned": text}  # JSON holds no NaN: its text


@pytest.mark.parametrize("spec", ["nonsense", "write_gate.core.formula:", ":FlatFormulaProvider", ":"])
def test_a_provider_spec_needs_a_module_and_a_class(spec: str) -> None:
    with pytest.raises(
        ValueError,
        match="WRITE_GATE_FORMULA_PROVIDER must be one of 'default', 'flat', 'admiralty', 'stix' or 'module:Class'",
    ):
        load_provider(spec)


def test_a_class_that_is_no_provider_is_named() -> None:
    with pytest.raises(TypeError, match="builtins:object does not implement"):
        load_provider("builtins:object")


@pytest.mark.parametrize("spec", ["write_gate.core.formula:FlatFormulaProvider:x", ":Flat", "write_gate.core.formula:"])
def test_a_provider_spec_is_one_module_and_one_class(spec: str) -> None:
    with pytest.raises(ValueError, match="'module:Class'"):
        load_provider(spec)

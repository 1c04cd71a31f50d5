"""The `admiralty` and `stix` built-in formula providers: every grade and scale value's exact confidence, what
each rejects, that the agent's reliability does not move them, what typed tools advertise for them, and the
start-up check of a method the server would stamp itself."""

import math
import re
from pathlib import Path

import jsonschema
import pytest

from write_gate.core.formula import (
    DefaultFormulaProvider,
    FormulaProvider,
    compute_confidence,
    load_provider,
    method_schema,
)
from write_gate.core.formula_admiralty import AdmiraltyFormulaProvider
from write_gate.core.formula_stix import StixFormulaProvider
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.serving.assembly import formula_provider
from write_gate.serving.config import ConfigurationError, Settings

ADMIRALTY = AdmiraltyFormulaProvider()
STIX = StixFormulaProvider()

# Written out by hand from docs/provenance/formulas.md (letter A 1.0, B 0.8, C 0.6, D 0.4, E 0.2, F 0.5; digit
# 1 0.9, 2 0.7, 3 0.5, 4 0.3, 5 0.1, 6 0.5), not computed from the provider's own tables.
ADMIRALTY_TABLE = {
    "A": [0.9, 0.7, 0.5, 0.3, 0.1, 0.5],
    "B": [0.72, 0.56, 0.4, 0.24, 0.08, 0.4],
    "C": [0.54, 0.42, 0.3, 0.18, 0.06, 0.3],
    "D": [0.36, 0.28, 0.2, 0.12, 0.04, 0.2],
    "E": [0.18, 0.14, 0.1, 0.06, 0.02, 0.1],
    "F": [0.45, 0.35, 0.25, 0.15, 0.05, 0.25],
}
ADMIRALTY_EXPECTED = {
    f"{letter}{digit}": value
    for letter, row in ADMIRALTY_TABLE.items()
    for digit, value in zip("123456", row, strict=True)
}

# STIX 2.1, Appendix A "Confidence Scales", as the table of docs/provenance/formulas.md spells each value.
STIX_EXPECTED = {
    "nlmh:none": 0.0,
    "nlmh:low": 0.15,
    "nlmh:med": 0.5,
    "nlmh:high": 0.85,
    **{f"0-10:{n}": n / 10 for n in range(11)},
    "admiralty:1": 0.9,
    "admiralty:2": 0.7,
    "admiralty:3": 0.5,
    "admiralty:4": 0.3,
    "admiralty:5": 0.1,
    "wep:impossible": 0.0,
    "wep:highly_unlikely": 0.1,
    "wep:unlikely": 0.3,
    "wep:even_chance": 0.5,
    "wep:likely": 0.7,
    "wep:highly_likely": 0.9,
    "wep:certain": 1.0,
    "dni:almost_no_chance": 0.05,
    "dni:very_unlikely": 0.15,
    "dni:unlikely": 0.3,
    "dni:roughly_even_chance": 0.5,
    "dni:likely": 0.7,
    "dni:very_likely": 0.85,
    "dni:almost_certain": 0.95,
}

ADMIRALTY_WRONG = ["b2", "a1", "f6", "2B", "G1", "A7", "A0", "", " B2", "B2 ", "B 2", "AA", "B22", "llm", "api"]
STIX_WRONG = [
    "admiralty:6",  # "Truth cannot be judged": STIX gives it no value
    "wep:Likely",
    "WEP:likely",
    "wep:probable",  # a synonym in the appendix's row; one spelling per row is accepted
    "wep:probably_not",
    "dni:remote",
    "0-10:11",
    "0-10:-1",
    "0-10:07",
    "nlmh:medium",
    "nlmh:None",
    "likely",
    "wep:likely ",
    "wep-likely",
    "dni:roughly even chance",
    "B2",
    "llm",
]


def test_admiralty_offers_exactly_the_36_grades() -> None:
    assert ADMIRALTY.allowed_extraction_methods() == set(ADMIRALTY_EXPECTED)
    assert len(ADMIRALTY_EXPECTED) == 36


@pytest.mark.parametrize("grade", sorted(ADMIRALTY_EXPECTED))
def test_every_admiralty_grade_has_its_documented_confidence(grade: str) -> None:
    # Exact equality: B2 is 0.8 x 0.7 = 0.5599999999999999 in floating point, and is stamped 0.56.
    assert compute_confidence(ADMIRALTY, 0.5, grade) == ADMIRALTY_EXPECTED[grade]


def test_cannot_be_judged_is_the_midpoint_of_either_scale() -> None:
    """F sits between C and D; 6 is where 3 (possibly true, STIX's even chance) is."""
    assert ADMIRALTY_EXPECTED["C1"] > ADMIRALTY_EXPECTED["F1"] > ADMIRALTY_EXPECTED["D1"]
    assert ADMIRALTY_EXPECTED["A6"] == ADMIRALTY_EXPECTED["A3"] and ADMIRALTY_EXPECTED["F6"] == 0.25


@pytest.mark.parametrize("method", ADMIRALTY_WRONG)
def test_admiralty_rejects_anything_but_an_upper_case_grade(method: str) -> None:
    with pytest.raises(GateRejection) as caught:
        compute_confidence(ADMIRALTY, 0.5, method)
    rejected = caught.value.rejected
    assert rejected.error_code is ErrorCode.INVALID_EXTRACTION_METHOD
    assert rejected.details["allowed"] == sorted(ADMIRALTY_EXPECTED)


def test_stix_offers_exactly_the_appendix_values() -> None:
    assert STIX.allowed_extraction_methods() == set(STIX_EXPECTED)
    assert len(STIX_EXPECTED) == 4 + 11 + 5 + 7 + 7


@pytest.mark.parametrize("method", sorted(STIX_EXPECTED))
def test_every_stix_value_is_its_stix_confidence_over_100(method: str) -> None:
    assert compute_confidence(STIX, 0.5, method) == STIX_EXPECTED[method]


@pytest.mark.parametrize("method", STIX_WRONG)
def test_stix_rejects_other_spellings_and_the_unmapped_admiralty_6(method: str) -> None:
    with pytest.raises(GateRejection) as caught:
        compute_confidence(STIX, 0.5, method)
    assert caught.value.rejected.error_code is ErrorCode.INVALID_EXTRACTION_METHOD
    assert caught.value.rejected.details["allowed"] == sorted(STIX_EXPECTED)


@pytest.mark.parametrize(
    "provider,method,expected", [(ADMIRALTY, "B2", 0.56), (ADMIRALTY, "F6", 0.25), (STIX, "dni:very_likely", 0.85)]
)
@pytest.mark.parametrize("reliability", [0.0, 0.1, 0.5, 1.0, -3.0, 7.0])
def test_the_agents_reliability_does_not_move_the_confidence(
    provider: FormulaProvider, method: str, expected: float, reliability: float
) -> None:
    assert compute_confidence(provider, reliability, method) == expected


@pytest.mark.parametrize("provider", [ADMIRALTY, STIX])
def test_a_non_finite_reliability_is_still_invalid_input(provider: FormulaProvider) -> None:
    method = min(provider.allowed_extraction_methods())
    with pytest.raises(GateRejection) as caught:
        compute_confidence(provider, math.nan, method)
    assert caught.value.rejected.error_code is ErrorCode.INVALID_INPUT


def test_the_built_ins_load_by_name() -> None:
    assert isinstance(load_provider("admiralty"), AdmiraltyFormulaProvider)
    assert isinstance(load_provider("stix"), StixFormulaProvider)
    with pytest.raises(ValueError, match="'admiralty', 'stix'"):
        load_provider("Admiralty")


@pytest.mark.parametrize(
    "provider,candidates",
    [(ADMIRALTY, [*ADMIRALTY_EXPECTED, *ADMIRALTY_WRONG]), (STIX, [*STIX_EXPECTED, *STIX_WRONG])],
)
def test_the_advertised_pattern_matches_exactly_the_accepted_methods(
    provider: FormulaProvider, candidates: list[str]
) -> None:
    """Typed tools advertise a pattern for these two (36 grades in every typed tool's enum cost ~3 KB on the
    RPG registry); a client that trusts it sends nothing the gate refuses and is refused nothing it sends."""
    schema = {"type": "string", **method_schema(provider)}
    jsonschema.Draft7Validator.check_schema(schema)
    admitted = {m for m in candidates if jsonschema.Draft7Validator(schema).is_valid(m)}
    assert admitted == provider.allowed_extraction_methods()


def test_a_provider_without_its_own_schema_advertises_the_enum() -> None:
    assert method_schema(DefaultFormulaProvider()) == {"enum": ["api", "llm", "manual", "parsed"]}
    assert method_schema(ADMIRALTY) == ADMIRALTY.extraction_method_schema()  # its own, where it has one


# --- the start-up check of a method the server stamps itself ----------------------------------------------


@pytest.mark.parametrize("provider", ["admiralty", "stix"])
def test_a_stamped_method_the_provider_refuses_is_one_clear_line(provider: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        formula_provider(Settings(formula_provider=provider), stamps="llm")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"WRITE_GATE_MEMORY_EXTRACTION_METHOD=llm is not a method the '{provider}' formula")
    page = re.search(r"\(see (docs/[\w/-]+\.md)\)$", message)
    assert page and (Path(__file__).parents[2] / page.group(1)).is_file(), message  # a page that says which


def test_a_stamped_method_the_provider_accepts_passes() -> None:
    assert isinstance(formula_provider(Settings(formula_provider="admiralty"), stamps="C3"), AdmiraltyFormulaProvider)
    assert isinstance(formula_provider(Settings(formula_provider="stix"), stamps="wep:likely"), StixFormulaProvider)
    assert isinstance(formula_provider(Settings(), stamps="llm"), DefaultFormulaProvider)
    # The gate profile stamps nothing itself: the memory setting is not its business.
    assert isinstance(formula_provider(Settings(formula_provider="admiralty")), AdmiraltyFormulaProvider)


@pytest.mark.parametrize(
    "spec,shown",
    [
        ("nonsense", "WRITE_GATE_FORMULA_PROVIDER must be one of"),
        ("no_such_module_here:X", "WRITE_GATE_FORMULA_PROVIDER=no_such_module_here:X: ModuleNotFoundError"),
        ("builtins:object", "WRITE_GATE_FORMULA_PROVIDER=builtins:object: TypeError"),
        ("write_gate.core.formula:NoSuchClass", "WRITE_GATE_FORMULA_PROVIDER=write_gate.core.formula:NoSuchClass"),
    ],
)
def test_a_provider_spec_that_loads_nothing_is_one_clear_line(spec: str, shown: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        formula_provider(Settings(formula_provider=spec))
    assert str(caught.value).startswith(shown) and "\n" not in str(caught.value)


def test_each_provider_advertises_its_extraction_method_exactly() -> None:
    """What a typed tool's schema shows an agent for extraction_method under each provider."""
    assert ADMIRALTY.extraction_method_schema() == {
        "pattern": "^[A-F][1-6]$",
        "description": "Admiralty grade: reliability A-F, credibility 1-6.",
    }
    stix = STIX.extraction_method_schema()
    assert stix["description"] == "A STIX 2.1 confidence scale value, scale:value."
    assert set(stix) == {"pattern", "description"} and re.fullmatch(stix["pattern"], "wep:likely")

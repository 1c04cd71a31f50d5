"""Confidence formula providers, and the contract the gate enforces around any of them."""

import importlib
import math
from typing import Any, ClassVar, Protocol, runtime_checkable

from write_gate.core.formula_admiralty import AdmiraltyFormulaProvider
from write_gate.core.formula_stix import StixFormulaProvider
from write_gate.core.model import ErrorCode, GateRejection

# Confidence is stored and answered rounded to this many decimals, so 0.8 x 0.75 reads 0.6, not
# 0.6000000000000001, and what an agent is told is exactly what the graph holds. Twelve: the arithmetic's noise
# (about 1e-16) goes, a provider's own precision (0.0740740734) stays.
CONFIDENCE_DECIMALS = 12


@runtime_checkable
class FormulaProvider(Protocol):
    def allowed_extraction_methods(self) -> set[str]: ...

    def compute(self, reliability: float, extraction_method: str) -> float: ...


class DefaultFormulaProvider:
    """Seed 003's default: confidence = reliability x the extraction method's weight."""

    WEIGHTS: ClassVar[dict[str, float]] = {
        "api": 1.0,  # live API / CLI / deterministic machine output
        "parsed": 0.85,  # structured document (YAML, JSON, HCL, Markdown front matter)
        "manual": 0.75,  # a human stated it: capped below verified sources
        "llm": 0.60,  # extracted by an LLM from unstructured text
    }

    def allowed_extraction_methods(self) -> set[str]:
        return set(self.WEIGHTS)

    def compute(self, reliability: float, extraction_method: str) -> float:
        return reliability * self.WEIGHTS[extraction_method]


class FlatFormulaProvider:
    """Flat declaration: the agent's reliability is the confidence, for trusted pipelines."""

    def allowed_extraction_methods(self) -> set[str]:
        return set(DefaultFormulaProvider.WEIGHTS)

    def compute(self, reliability: float, extraction_method: str) -> float:
        return reliability


BUILT_IN: dict[str, type[FormulaProvider]] = {
    "default": DefaultFormulaProvider,
    "flat": FlatFormulaProvider,
    "admiralty": AdmiraltyFormulaProvider,
    "stix": StixFormulaProvider,
}


def load_provider(spec: str) -> FormulaProvider:
    """A built-in's name (BUILT_IN), or `package.module:ClassName` (instantiated with no arguments)."""
    if spec in BUILT_IN:
        return BUILT_IN[spec]()
    module_name, sep, class_name = spec.partition(":")
    if not sep or not module_name or not class_name or ":" in class_name:
        names = ", ".join(f"'{name}'" for name in BUILT_IN)
        raise ValueError(f"WRITE_GATE_FORMULA_PROVIDER must be one of {names} or 'module:Class', not {spec!r}")
    provider = getattr(importlib.import_module(module_name), class_name)()
    if not isinstance(provider, FormulaProvider):
        raise TypeError(f"{spec} does not implement allowed_extraction_methods() and compute()")
    return provider


def method_schema(provider: FormulaProvider) -> dict[str, Any]:
    """What a typed tool advertises for extraction_method: the provider's `extraction_method_schema()` where it
    has one (a pattern is shorter than 36 grades in every typed tool), else the enum of its methods. The gate,
    not the schema, decides what passes (INVALID_EXTRACTION_METHOD)."""
    own = getattr(provider, "extraction_method_schema", None)
    return dict(own()) if callable(own) else {"enum": sorted(provider.allowed_extraction_methods())}


def compute_confidence(provider: FormulaProvider, reliability: float, extraction_method: str) -> float:
    """Clamp, check the method, call the provider, check its output: seed 003's contract."""
    if math.isnan(reliability):  # the one number no clamp places (1e999 is infinity, and clamps to 1.0)
        raise GateRejection(ErrorCode.INVALID_INPUT, "reliability must be a number, not NaN", field="reliability")
    allowed = provider.allowed_extraction_methods()
    if extraction_method not in allowed:
        raise GateRejection(
            ErrorCode.INVALID_EXTRACTION_METHOD,
            f"extraction_method must be one of {sorted(allowed)}",
            allowed=sorted(allowed),
        )
    clamped = min(1.0, max(0.0, float(reliability)))
    try:
        confidence = provider.compute(clamped, extraction_method)
    except Exception as exc:  # a plug-in's failure is a rejection, never a crash
        raise GateRejection(
            ErrorCode.FORMULA_INVALID_OUTPUT, f"formula provider failed: {type(exc).__name__}", provider_error=str(exc)
        ) from exc
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0.0 <= confidence <= 1.0:
        raise GateRejection(
            ErrorCode.FORMULA_INVALID_OUTPUT,
            "formula provider returned a confidence outside [0.0, 1.0]",
            # The number itself where JSON holds it (1.2000000000000002); its text for NaN, infinities and non-numbers.
            returned=confidence if _json_number(confidence) else repr(confidence),
        )
    return round(float(confidence), CONFIDENCE_DECIMALS)


def _json_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)

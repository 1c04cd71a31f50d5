"""The `stix` formula provider: the agent names a value on one of STIX 2.1's confidence scales, and the
confidence is that value's STIX confidence (0-100) / 100."""

from typing import ClassVar

# STIX Version 2.1 (OASIS Standard, and Errata 01 unchanged here), Appendix A "Confidence Scales": each scale's
# values and the STIX Confidence Value the appendix maps each to. The method is `scale:value`, lower case, with
# `_` for spaces and one spelling per row (the first of a row's synonyms: "Likely/Probable" is `wep:likely`).
SCALES: dict[str, dict[str, int]] = {
    # None/Low/Med/High
    "nlmh": {"none": 0, "low": 15, "med": 50, "high": 85},
    # 0-10 Scale
    "0-10": {str(n): n * 10 for n in range(11)},
    # Admiralty Credibility. "6 - Truth cannot be judged" maps to "Not Specified" (the confidence property
    # absent), and the gate always stamps a confidence: it is not offered, so `admiralty:6` is rejected.
    "admiralty": {"1": 90, "2": 70, "3": 50, "4": 30, "5": 10},
    # WEP: Words of Estimative Probability
    "wep": {
        "impossible": 0,
        "highly_unlikely": 10,  # Highly Unlikely/Almost Certainly Not
        "unlikely": 30,  # Unlikely/Probably Not
        "even_chance": 50,
        "likely": 70,  # Likely/Probable
        "highly_likely": 90,  # Highly likely/Almost Certain
        "certain": 100,
    },
    # DNI Scale (ICD 203)
    "dni": {
        "almost_no_chance": 5,  # Almost No Chance / Remote
        "very_unlikely": 15,  # Very Unlikely / Highly Improbable
        "unlikely": 30,  # Unlikely / Improbable
        "roughly_even_chance": 50,  # Roughly Even Chance / Roughly Even Odds
        "likely": 70,  # Likely / Probable
        "very_likely": 85,  # Very Likely / Highly Probable
        "almost_certain": 95,  # Almost Certain / Nearly Certain
    },
}

STIX_CONFIDENCE: dict[str, int] = {
    f"{scale}:{value}": confidence for scale, values in SCALES.items() for value, confidence in values.items()
}


# The same methods as one pattern, for typed tools to advertise (34 values in every typed tool would be ~10 KB).
PATTERN = "^(" + "|".join(f"{scale}:({'|'.join(values)})" for scale, values in SCALES.items()) + ")$"


class StixFormulaProvider:
    """confidence = the STIX confidence value of the stated scale value / 100. The scale value is the whole
    judgement, so the agent's reliability is not used (it must still be a number, not NaN: the gate checks)."""

    METHODS: ClassVar[dict[str, int]] = STIX_CONFIDENCE

    def allowed_extraction_methods(self) -> set[str]:
        return set(self.METHODS)

    def compute(self, reliability: float, extraction_method: str) -> float:
        return self.METHODS[extraction_method] / 100

    def extraction_method_schema(self) -> dict[str, str]:
        return {"pattern": PATTERN, "description": "A STIX 2.1 confidence scale value, scale:value."}

"""The `admiralty` formula provider: NATO AJP-2.1 grading, source reliability A-F x information credibility 1-6,
stated as a two-character grade ("B2")."""

from typing import ClassVar

from write_gate.core.formula_stix import SCALES

# Source reliability: A completely reliable, B usually, C fairly, D not usually reliable, E unreliable, in even
# steps. F "reliability cannot be judged" is the scale's midpoint, 0.5: no record either way, so an unknown
# source ranks below a fairly reliable one and above one known to be not usually reliable.
RELIABILITY: dict[str, float] = {"A": 1.0, "B": 0.8, "C": 0.6, "D": 0.4, "E": 0.2, "F": 0.5}

# Information credibility: STIX 2.1's own mapping of the Admiralty Credibility scale (Appendix A), / 100, so the
# two providers agree on a digit: 1 confirmed 0.9, 2 probably true 0.7, 3 possibly true 0.5, 4 doubtful 0.3,
# 5 improbable 0.1. STIX leaves 6 "truth cannot be judged" unmapped; here it is the midpoint, 0.5, for the same
# reason as F: nothing known either way (the same value as 3, which STIX puts at even chance).
CREDIBILITY: dict[str, float] = {digit: value / 100 for digit, value in SCALES["admiralty"].items()} | {"6": 0.5}

# Exactly the 36 grades, upper-case letter then digit: "b2" or "2B" is not a grade (INVALID_EXTRACTION_METHOD),
# so every node stamped by this provider carries one spelling of its grade.
GRADES: dict[str, float] = {
    letter + digit: RELIABILITY[letter] * CREDIBILITY[digit] for letter in RELIABILITY for digit in CREDIBILITY
}


class AdmiraltyFormulaProvider:
    """confidence = reliability(letter) x credibility(digit). The letter already is the source's reliability, so
    the agent's `reliability` is not used: multiplying it in would count the source twice."""

    GRADES: ClassVar[dict[str, float]] = GRADES

    def allowed_extraction_methods(self) -> set[str]:
        return set(self.GRADES)

    def compute(self, reliability: float, extraction_method: str) -> float:
        return self.GRADES[extraction_method]

    def extraction_method_schema(self) -> dict[str, str]:
        """The 36 grades as typed tools advertise them: a pattern, not a 36-value enum in every tool."""
        return {"pattern": "^[A-F][1-6]$", "description": "Admiralty grade: reliability A-F, credibility 1-6."}

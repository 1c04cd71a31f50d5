"""Confidence decay (issue 12, item 8), decided purely.

A claim's effective confidence halves every half-life since it was written: stored 0.8, half-life 30 days,
written 60 days ago -> 0.2. Decay is applied when a value is read or compared, never stored, so changing a
half-life re-weighs every claim at once and nothing is rewritten. Which half-life: the label's (a registry
entry's, the data's own pace) if it has one, else the extraction method's (a setting), else none (no decay).
"""

from collections.abc import Callable, Mapping
from datetime import UTC, datetime

from write_gate.core.claims import ValueProvenance

# A read's weighting of a stored confidence, not a stored value: six decimals say it.
EFFECTIVE_DECIMALS = 6

SECONDS_PER_DAY = 86_400


def parse_at(text: str) -> datetime:
    """A stored time (`clock.utc_now`'s text: `2026-11-22T08:00:00.000Z`) as an aware datetime (Python 3.11 on
    reads the `Z`)."""
    return datetime.fromisoformat(text).astimezone(UTC)


def half_life_days(label_half_life: float | None, method: str, by_method: Mapping[str, float]) -> float | None:
    if label_half_life is not None:
        return label_half_life
    return by_method.get(method)


def effective_confidence(confidence: float, at: str, now: datetime, half_life: float | None) -> float:
    """`confidence * 0.5 ** (age / half_life)`, age in days since `at`; a claim from the future (clock skew
    between gates) counts as written now; no half-life, no decay."""
    if half_life is None:
        return confidence
    age_days = max(0.0, (now - parse_at(at)).total_seconds() / SECONDS_PER_DAY)
    # A float power may be complex in general, so typeshed types it Any; a positive base keeps this one real.
    factor: float = 0.5 ** (age_days / half_life)
    return round(confidence * factor, EFFECTIVE_DECIMALS)


def weigher(
    label_half_life: float | None, by_method: Mapping[str, float], now: datetime
) -> Callable[[ValueProvenance], float]:
    """A claim's effective confidence at `now`, for a subject whose entry has `label_half_life` (None: each
    claim's extraction method's, from `by_method`): what higher_confidence_wins compares."""

    def weigh(claim: ValueProvenance) -> float:
        half_life = half_life_days(label_half_life, claim.extraction_method, by_method)
        return effective_confidence(claim.confidence, claim.at, now, half_life)

    return weigh

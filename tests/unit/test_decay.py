"""Confidence decay (core.decay): exact figures."""

from datetime import UTC, datetime, timedelta

from write_gate.core.claims import ValueProvenance
from write_gate.core.decay import effective_confidence, half_life_days, parse_at, weigher

WRITTEN = "2026-01-01T00:00:00.000Z"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_a_claim_halves_every_half_life() -> None:
    assert effective_confidence(0.8, WRITTEN, T0, 30) == 0.8
    assert effective_confidence(0.8, WRITTEN, T0 + timedelta(days=30), 30) == 0.4
    assert effective_confidence(0.8, WRITTEN, T0 + timedelta(days=60), 30) == 0.2
    assert effective_confidence(0.8, WRITTEN, T0 + timedelta(days=15), 30) == 0.565685  # 0.8 / sqrt(2)
    assert effective_confidence(0.75, WRITTEN, T0 + timedelta(days=365), 30) == 0.000163


def test_no_half_life_no_decay_and_no_decay_from_the_future() -> None:
    assert effective_confidence(0.8, WRITTEN, T0 + timedelta(days=999), None) == 0.8
    assert effective_confidence(0.8, WRITTEN, T0 - timedelta(days=1), 30) == 0.8


def test_a_stale_sure_claim_loses_to_a_fresh_unsure_one() -> None:
    now = T0 + timedelta(days=90)
    stale = effective_confidence(0.75, WRITTEN, now, 30)  # three half-lives: 0.09375
    fresh = effective_confidence(0.2, (now - timedelta(days=1)).isoformat().replace("+00:00", "Z"), now, 30)
    assert stale == 0.09375 and fresh == 0.195432 and fresh > stale


def test_the_label_half_life_comes_before_the_method_s() -> None:
    assert half_life_days(7, "llm", {"llm": 30}) == 7
    assert half_life_days(None, "llm", {"llm": 30}) == 30
    assert half_life_days(None, "manual", {"llm": 30}) is None


def test_stored_times_parse_as_utc() -> None:
    assert parse_at("2026-01-01T00:00:00.000Z") == T0


def test_the_weigher_takes_the_label_half_life_before_the_method_one() -> None:
    claim = ValueProvenance(agent="a", source="s", extraction_method="llm", confidence=0.8, at=WRITTEN)
    later = T0 + timedelta(days=30)
    assert weigher(None, {"llm": 30}, later)(claim) == 0.4
    assert weigher(60, {"llm": 30}, later)(claim) == 0.565685
    assert weigher(None, {"manual": 30}, later)(claim) == 0.8

"""The gate's one clock."""

import re
import time
from datetime import UTC, datetime, timedelta

import pytest

from write_gate.core.clock import as_utc_text, utc_now
from write_gate.core.decay import parse_at


def test_now_is_utc_iso_8601_with_milliseconds_and_a_z() -> None:
    before = datetime.now(UTC)
    text = utc_now()
    after = datetime.now(UTC)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", text), text
    stamped = datetime.fromisoformat(text)
    assert before - timedelta(milliseconds=1) <= stamped <= after


def test_times_are_utc_whatever_the_machines_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    """A naive moment is read as UTC and a stored time comes back in UTC, on a machine set to another zone."""
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        assert as_utc_text(datetime(2026, 1, 2, 3, 4, 5)) == "2026-01-02T03:04:05.000Z"
        assert as_utc_text(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == "2026-01-02T03:04:05.000Z"
        assert parse_at("2026-01-02T03:04:05.000Z").isoformat() == "2026-01-02T03:04:05+00:00"
    finally:
        monkeypatch.undo()
        time.tzset()

"""The gate's one clock."""

import re
from datetime import UTC, datetime, timedelta

from write_gate.core.clock import utc_now


def test_now_is_utc_iso_8601_with_milliseconds_and_a_z() -> None:
    before = datetime.now(UTC)
    text = utc_now()
    after = datetime.now(UTC)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", text), text
    stamped = datetime.fromisoformat(text)
    assert before - timedelta(milliseconds=1) <= stamped <= after

"""The gate's one clock: every timestamp it stores is computed here, so both engines store the same text."""

from datetime import UTC, datetime


def utc_now() -> str:
    """ISO-8601 UTC with millisecond precision, e.g. `2026-11-22T08:00:00.000Z`."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")

"""The gate's one clock: every timestamp it stores is computed here, so both engines store the same text."""

from datetime import UTC, datetime


def utc_now() -> str:
    """ISO-8601 UTC with millisecond precision, e.g. `2026-11-22T08:00:00.000Z`."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def as_utc_text(moment: datetime) -> str:
    """A moment as `utc_now` writes it (a naive one is read as UTC), so stored times compare with it as text."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")

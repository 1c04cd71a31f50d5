"""How far back the change history reaches (WRITE_GATE_HISTORY_RETENTION_DAYS), decided purely."""

from datetime import datetime, timedelta

from write_gate.core.clock import as_utc_text


def retention_cutoff(now: datetime, retention_days: float | None) -> str | None:
    """The time before which records go, as the stored text compares with it; None (or 0): keep every one."""
    if not retention_days:
        return None
    return as_utc_text(now - timedelta(days=retention_days))

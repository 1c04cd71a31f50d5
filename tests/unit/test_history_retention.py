"""History retention (issue 12, item 4), pure: the cutoff a retention gives, and the chunked prune statements
(what they run against each engine is tests/e2e/test_history_retention.py's business)."""

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from write_gate.core.cypher.history_retention import PRUNE_CHUNK, prune_changes, prune_conflicts
from write_gate.core.cypher.idempotency import prune_records
from write_gate.core.cypher.statement import Statement
from write_gate.core.retention import retention_cutoff

NOW = datetime(2026, 11, 22, 8, tzinfo=UTC)


def test_the_cutoff_is_now_less_the_retention_as_stored_time_text() -> None:
    assert retention_cutoff(NOW, 30) == "2026-10-23T08:00:00.000Z"
    assert retention_cutoff(NOW, 0.5) == "2026-11-21T20:00:00.000Z"


@pytest.mark.parametrize("days", [0, 0.0, None])
def test_no_retention_means_no_cutoff(days: float | None) -> None:
    assert retention_cutoff(NOW, days) is None


def test_the_prune_statements_take_the_cutoff_as_a_parameter_and_delete_one_chunk() -> None:
    changes = prune_changes("2026-10-23T08:00:00.000Z")
    # The numeric window takes the cutoff's own millisecond (`…000Z` and no later), the text test decides.
    assert changes.params == {"cutoff": "2026-10-23T08:00:00.000Z", "cutoff_n": 261023080000001}
    assert f"LIMIT {PRUNE_CHUNK}" in changes.text and "WriteGateChange" in changes.text
    conflicts = prune_conflicts("2026-10-23T08:00:00.000Z", chunk=5)
    assert conflicts.params == {
        "cutoff": "2026-10-23T08:00:00.000Z",
        "cutoff_n": 261023080000001,
        "statuses": ["settled", "resolved"],
    }
    assert "LIMIT 5" in conflicts.text and "WriteGateConflict" in conflicts.text


@pytest.mark.parametrize("chunk", [0, -1, True, 2.5, "3"])
@pytest.mark.parametrize("prune", [prune_changes, prune_conflicts, prune_records])
def test_a_chunk_is_a_positive_integer(prune: Callable[[str, int], object], chunk: object) -> None:
    with pytest.raises(ValueError, match="^a prune chunk is a positive integer$"):
        prune("x", chunk)  # type: ignore[arg-type]


@pytest.mark.parametrize("prune", [prune_changes, prune_conflicts, prune_records])
def test_a_chunk_of_one_deletes_one_at_a_time(prune: Callable[[str, int], Statement]) -> None:
    statement = prune("2026-10-23T08:00:00.000Z", 1)
    assert "LIMIT 1\n" in statement.text and statement.params["cutoff"] == "2026-10-23T08:00:00.000Z"

"""The change feed, decided purely: its areas (resource URIs), its horizon, grouping records into changes, and
which polled changes are new to a watcher.

Order: oldest first by (`seq`, `seq_k`, `change_id`): `seq` is the writing gate's `at`, moved past the subject's
last change when that one sorts later (core/cypher/change_order.py), so every subject's changes come in the order
they were made, and the order is the same from every gate that reads it; `seq_k`, a change's place in its
millisecond, puts a batch's changes in the order of its items (core/feed_windows.py). A reader must not step past
a change that has yet to commit with an earlier `seq` (a statement commits after its stamp, and a gate's clock can
run behind). The feed therefore answers only changes ordered at or before its horizon, `now - settle`, and
before the start of the oldest write the reading gate is running (services/writes_in_flight.py): a change through
the reader's own gate is never skipped, however late it commits; one through another gate is never skipped if it
commits within `settle` seconds of its stamp, and can be if it commits later (or its gate's clock lags by more).
A change to a subject is never answered before the one it followed: that one committed first (the statement that
made the later change read it) and sorts first.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from write_gate.core.clock import as_utc_text
from write_gate.core.decay import parse_at
from write_gate.core.history import value_changes

CHANGES_URI = "write-gate://changes"
AREA_TEMPLATE = CHANGES_URI + "/{label}"
_AREA_PREFIX = CHANGES_URI + "/"


def write_retry_seconds(settle_seconds: float, timeout_seconds: float) -> float:
    """How long an engine's driver may keep sending a write again (Memgraph's managed transactions, after a
    conflict or a connection lost before COMMIT): the statement carries the stamp of when it was decided, so a
    write sent again later than the settle window after it could commit where a poller has already passed. Half
    the window leaves the other half to the attempts themselves. With no window (0), readers rely on none."""
    return min(settle_seconds / 2, timeout_seconds) if settle_seconds > 0 else timeout_seconds


def horizon(now: str, settle_seconds: float, oldest_in_flight: str | None = None) -> str:
    """The newest stamp the feed answers at `now` (all as `core.clock` writes them): `settle_seconds` before it,
    and before the start of the oldest write this gate is running (services/writes_in_flight.py), whose stamps
    are all at or after that start."""
    settled = as_utc_text(parse_at(now) - timedelta(seconds=settle_seconds))
    if oldest_in_flight is None:
        return settled
    return min(settled, as_utc_text(parse_at(oldest_in_flight) - timedelta(milliseconds=1)))


# A write answered with one of these may still commit (the engine did not answer in time, or went away with it).
UNKNOWN_OUTCOMES = frozenset({"BACKEND_UNAVAILABLE", "QUERY_TIMEOUT", "IDEMPOTENCY_OUTCOME_UNKNOWN"})


@dataclass(frozen=True)
class Area:
    """A change resource: every change (`label` None) or those of one node label or relationship type."""

    label: str | None = None

    @property
    def uri(self) -> str:
        return CHANGES_URI if self.label is None else _AREA_PREFIX + self.label


def parse_area(uri: str) -> Area | None:
    """The area a URI names, or None when it names none (the label is checked by the caller)."""
    if uri == CHANGES_URI:
        return Area()
    if uri.startswith(_AREA_PREFIX) and (label := uri[len(_AREA_PREFIX) :]) and "/" not in label:
        return Area(label)
    return None


def touched_uris(labels: Iterable[str]) -> set[str]:
    """The change resources a write to these labels and types updates: each one's area, and the whole graph's."""
    names = set(labels)
    return {CHANGES_URI, *(Area(label).uri for label in names)} if names else set()


_SUBJECT = ("subject", "label", "key", "from_label", "from_key", "to_label", "to_key")


def _subject(record: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(record.get(name) for name in _SUBJECT)


_OP_ORDER = {"delete": 0, "set": 1}  # what a change removed, then what it wrote (a merge: what went, what it became)


def _part_order(item: tuple[tuple[Any, ...], Any]) -> tuple[int, list[str]]:
    *subject, op = item[0]
    return _OP_ORDER.get(op, len(_OP_ORDER)), [str(v) for v in subject]  # any other op (resolve) after these


def group_changes(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows of `at`, `change_id` and their `records` as changes: one per change and subject and op (a merge
    deletes one subject and sets another under one id), in the rows' order, deletes first within a change, then
    by subject; properties by name (each record's values one by one: `core.history.value_changes`)."""
    changes = []
    for row in rows:
        parts: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
        for stored in row["records"]:
            for record in value_changes(stored):
                parts.setdefault((*_subject(record), record.get("op")), []).append(record)
        for (*_, op), records in sorted(parts.items(), key=_part_order):
            first = records[0]
            changes.append(
                {
                    "change_id": row["change_id"],
                    "at": row["at"],
                    "op": op,
                    "subject": {k: first[k] for k in _SUBJECT if first.get(k) is not None},
                    "agent": first.get("agent"),
                    "records": sorted(records, key=lambda r: str(r.get("property"))),
                }
            )
    return changes


@dataclass
class SeenChanges:
    """The changes a watcher has already reported, kept for `overlap_seconds` behind the newest stamp it saw,
    so polling again from a little before that stamp (for changes that committed late) reports none twice.
    Nothing stamped before `start` (when the watcher began listening) is polled."""

    overlap_seconds: float
    start: str
    since: str = ""
    # (change_id, label, at): at. A long call's statements share its change id, each stamped as it is sent
    # (services/call_stamps.py): a later one is new to the watcher.
    _seen: dict[tuple[str, str, str], str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.since = max(self.since, self.start)

    def poll_from(self) -> str:
        return max(self.start, horizon(self.since, self.overlap_seconds))

    def fresh(self, rows: Iterable[Mapping[str, Any]]) -> set[str]:
        """The labels of rows (`at`, `change_id`, `label`) not reported before; they count as reported now."""
        labels = set()
        for row in rows:
            seen = (row["change_id"], row["label"], row["at"])
            if seen in self._seen:
                continue
            self._seen[seen] = row["at"]
            self.since = max(self.since, row["at"])
            labels.add(row["label"])
        cutoff = self.poll_from()
        self._seen = {seen: at for seen, at in self._seen.items() if at >= cutoff}
        return labels

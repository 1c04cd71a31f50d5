"""The change feed's pure parts: areas and their URIs, the horizon, grouping records into changes, and the
watcher's memory of what it already reported."""

from write_gate.core.change_feed import (
    CHANGES_URI,
    Area,
    SeenChanges,
    group_changes,
    horizon,
    parse_area,
    touched_uris,
    write_retry_seconds,
)


def test_areas_are_every_change_or_one_label() -> None:
    assert parse_area(CHANGES_URI) == Area()
    assert parse_area("write-gate://changes/Person") == Area("Person")
    assert Area("Person").uri == "write-gate://changes/Person" and Area().uri == CHANGES_URI
    for other in ("write-gate://schema", "write-gate://changes/", "write-gate://changes/a/b", "write-gate://changesX"):
        assert parse_area(other) is None


def test_a_write_touches_its_labels_areas_and_the_whole_graphs() -> None:
    assert touched_uris(["Person", "KNOWS"]) == {
        CHANGES_URI,
        "write-gate://changes/Person",
        "write-gate://changes/KNOWS",
    }
    assert touched_uris([]) == set()


def test_the_horizon_is_settle_seconds_before_now_in_the_clocks_text() -> None:
    assert horizon("2026-11-22T08:00:01.500Z", 2) == "2026-11-22T07:59:59.500Z"
    assert horizon("2026-11-22T08:00:00.000Z", 0) == "2026-11-22T08:00:00.000Z"


def _record(label: str, key: str, prop: str, op: str = "set", **more: object) -> dict[str, object]:
    return {"subject": "node", "label": label, "key": key, "property": prop, "op": op, "agent": "a", **more}


def test_records_group_into_one_change_per_subject_and_op_properties_by_name() -> None:
    merge = [
        _record("Org", "k2", "name", "delete", before="Acmee"),
        _record("Org", "k1", "founded", after=1990),
        _record("Org", "k2", "founded", "delete", before=1990),
    ]
    rows = [
        {"at": "t1", "change_id": "c1", "records": [_record("P", "k", "name", after="A"), _record("P", "k", "age")]},
        {"at": "t2", "change_id": "c2", "records": merge},
    ]
    changes = group_changes(rows)
    assert [(c["change_id"], c["op"], c["subject"]["key"]) for c in changes] == [
        ("c1", "set", "k"),
        ("c2", "delete", "k2"),
        ("c2", "set", "k1"),
    ]
    assert [r["property"] for r in changes[0]["records"]] == ["age", "name"]
    assert [r["property"] for r in changes[1]["records"]] == ["founded", "name"]
    assert changes[0]["subject"] == {"subject": "node", "label": "P", "key": "k"} and changes[0]["agent"] == "a"


def test_the_watcher_reports_each_change_once_and_forgets_what_the_overlap_left_behind() -> None:
    seen = SeenChanges(overlap_seconds=10, start="2026-11-22T08:00:00.000Z")
    assert seen.poll_from() == "2026-11-22T08:00:00.000Z"  # never before it started
    first = [
        {"at": "2026-11-22T08:00:05.000Z", "change_id": "a", "label": "Person"},
        {"at": "2026-11-22T08:00:05.000Z", "change_id": "a", "label": "KNOWS"},  # one change, two areas
    ]
    assert seen.fresh(first) == {"Person", "KNOWS"}
    assert seen.fresh(first) == set()
    late = {"at": "2026-11-22T08:00:04.000Z", "change_id": "b", "label": "Org"}  # committed after a's poll
    later = {"at": "2026-11-22T08:00:30.000Z", "change_id": "c", "label": "Person"}
    assert seen.fresh([late, *first, later]) == {"Org", "Person"}
    assert seen.poll_from() == "2026-11-22T08:00:20.000Z"
    assert seen.fresh([later]) == set()
    assert seen.fresh([first[0]]) == {"Person"}  # older than the overlap: forgotten, as no poll asks for it
    # A long call's later statement: its change id, stamped later (services/call_stamps.py), is news.
    assert seen.fresh([{**later, "at": "2026-11-22T08:00:31.000Z"}]) == {"Person"}


def test_one_change_to_several_subjects_is_one_change_each_ordered_by_subject_then_op() -> None:
    records = [
        _record("P", "k2", "age", after=2),
        _record("P", "k1", "age", after=1),
        _record("P", "k3", "age", "resolve", after=3),
        _record("P", "k4", "age", "delete", before=4),
    ]
    changes = group_changes([{"at": "t1", "change_id": "c1", "records": records}])
    assert [(c["change_id"], c["at"], c["op"], c["subject"]["key"]) for c in changes] == [
        ("c1", "t1", "delete", "k4"),
        ("c1", "t1", "set", "k1"),
        ("c1", "t1", "set", "k2"),
        ("c1", "t1", "resolve", "k3"),  # an op other than delete and set: last
    ]


def test_a_change_exactly_at_the_overlaps_edge_is_still_remembered() -> None:
    seen = SeenChanges(overlap_seconds=10, start="2026-11-22T08:00:00.000Z")
    edge = {"at": "2026-11-22T08:00:05.000Z", "change_id": "a", "label": "Person"}
    newest = {"at": "2026-11-22T08:00:15.000Z", "change_id": "b", "label": "Person"}
    assert seen.fresh([edge, newest]) == {"Person"}
    assert seen.poll_from() == edge["at"]  # polled again from there: it is answered again, and not reported
    assert seen.fresh([edge]) == set()


def test_a_write_is_sent_again_only_within_half_the_settle_window() -> None:
    assert write_retry_seconds(1.0, 10.0) == 0.5
    assert write_retry_seconds(30.0, 10.0) == 10.0  # never past the query timeout
    assert write_retry_seconds(0.0, 10.0) == 10.0  # no window: readers rely on none

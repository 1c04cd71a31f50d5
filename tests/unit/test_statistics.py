"""The statistics' pure parts: buckets, summing the engine's tally rows across labels, growth, extremes; and the
saved searches' check of their arguments by the search's own model."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from write_gate.core.model import GateRejection
from write_gate.core.statistics import bucket_of, bucket_ranges, extremes, growth, nanos, tally
from write_gate.services.reads import SearchNodesRequest
from write_gate.services.saved_searches import search_request
from write_gate.services.search import RankedSearchRequest


def test_ten_buckets_named_by_their_bounds() -> None:
    assert bucket_ranges()[0] == "0.0-0.1" and bucket_ranges()[-1] == "0.9-1.0" and len(bucket_ranges()) == 10


@pytest.mark.parametrize(
    "confidence,bucket", [(0.0, 0), (0.05, 0), (0.1, 1), (0.3, 3), (0.7, 7), (0.99, 9), (1.0, 9), (-1, 0), (7, 9)]
)
def test_a_bucket_holds_its_lower_bound_and_one_is_in_the_last(confidence: float, bucket: int) -> None:
    assert bucket_of(confidence) == bucket


@given(st.floats(min_value=0, max_value=1))
def test_every_confidence_falls_in_the_bucket_whose_range_holds_it(confidence: float) -> None:
    low, high = (float(x) for x in bucket_ranges()[bucket_of(confidence)].split("-"))
    assert low - 1e-9 <= confidence <= high + 1e-9


def row(part: int, dimension: str, value: object, count: int, low: float = 0.5, high: float = 0.5) -> dict:
    return {"part": part, "dimension": dimension, "value": value, "count": count, "low": low, "high": high,
            "total": nanos((low + high) / 2) * count}  # fmt: skip


def test_tally_sums_labels_and_keeps_each_dimension_apart() -> None:
    rows = [
        row(0, "archived", False, 3),
        row(0, "archived", True, 1),
        row(1, "archived", False, 2),
        row(0, "agent", "a", 4),
        row(1, "agent", "a", 1),
        row(1, "agent", "b", 1),
        row(0, "agent", None, 0),
        row(0, "source", "hr", 4),
        row(0, "day", "2026-01-01", 4),
        row(1, "day", "2026-01-01", 2),
        row(0, "confidence", 2, 3, low=0.2, high=0.25),
        row(1, "confidence", 9, 2, low=0.9, high=1.0),
        row(1, "confidence", None, 0),
    ]
    out = tally(rows, "archived", ["Person", "Organization"])
    assert out.per_name == {"Person": 4, "Organization": 2} and out.total == 6 and out.archived == 1
    assert out.by_agent == {"a": 5, "b": 1} and out.by_source == {"hr": 4} and out.by_day == {"2026-01-01": 6}
    assert out.confidence.buckets == [0, 0, 3, 0, 0, 0, 0, 0, 0, 2]
    assert (out.confidence.low, out.confidence.high, out.confidence.rated) == (0.2, 1.0, 5)
    assert out.confidence.mean == pytest.approx((0.225 * 3 + 0.95 * 2) / 5)


def test_relationship_rows_name_their_type() -> None:
    rows = [{**row(0, "count", None, 2), "name": "KNOWS"}, {**row(0, "agent", "a", 2), "name": "KNOWS"}]
    out = tally(rows, "count")
    assert (out.per_name, out.by_agent, out.archived) == ({"KNOWS": 2}, {"a": 2}, 0)


def test_growth_joins_the_days_of_both_kinds_oldest_first() -> None:
    assert growth({"2026-01-02": 2, "2026-01-01": 1}, {"2026-01-03": 4, "2026-01-01": 1}) == [
        {"date": "2026-01-01", "entities": 1, "relations": 1},
        {"date": "2026-01-02", "entities": 2, "relations": 0},
        {"date": "2026-01-03", "entities": 0, "relations": 4},
    ]


def test_extremes_pick_across_labels() -> None:
    rows = [
        {"part": 0, "end": "oldest", "name": "b", "key": "k2", "at": "2026-01-02"},
        {"part": 0, "end": "newest", "name": "c", "key": "k3", "at": "2026-01-05"},
        {"part": 1, "end": "oldest", "name": "a", "key": "k1", "at": "2026-01-01"},
        {"part": 1, "end": "newest", "name": "d", "key": "k4", "at": "2026-01-04"},
    ]
    picked = extremes(rows, ["Person", "Organization"])
    assert (picked["oldest"]["name"], picked["oldest"]["label"]) == ("a", "Organization")
    assert (picked["newest"]["name"], picked["newest"]["label"]) == ("c", "Person")
    assert extremes([], ["Person"]) == {}


@pytest.mark.parametrize(
    "search_type,model,fuzzy",
    [
        ("basic", SearchNodesRequest, None),
        ("ranked", RankedSearchRequest, False),
        ("boolean", RankedSearchRequest, False),
        ("fuzzy", RankedSearchRequest, True),
    ],
)
def test_each_search_type_is_checked_by_its_search_model(search_type: str, model: type, fuzzy: bool | None) -> None:
    request = search_request({"query": "ada", "searchType": search_type, "labels": ["Person"], "limit": 5})
    assert isinstance(request, model) and (request.query, request.labels, request.limit) == ("ada", ["Person"], 5)
    assert getattr(request, "fuzzy", None) is fuzzy


def test_a_search_its_model_refuses_names_the_field_not_the_value() -> None:
    with pytest.raises(GateRejection) as refused:
        search_request({"query": "secret-value", "searchType": "ranked", "limit": 500}, stored=True)
    rejected = refused.value.rejected
    assert [p["field"] for p in rejected.details["problems"]] == ["limit"]
    assert "secret-value" not in rejected.model_dump_json()


def test_rows_of_one_bucket_and_of_archived_add_up_across_labels() -> None:
    rows = [
        row(0, "archived", True, 2),
        row(1, "archived", True, 3),
        row(0, "confidence", 4, 2, low=0.4, high=0.45),
        row(1, "confidence", 4, 1, low=0.42, high=0.43),  # a lower high: the highest stays
    ]
    out = tally(rows, "archived", ["Person", "Organization"])
    assert out.archived == 5 and out.confidence.buckets[4] == 3
    assert (out.confidence.low, out.confidence.high, out.confidence.rated) == (0.4, 0.45, 3)


def test_extremes_break_ties_by_key_a_missing_key_first_and_an_exact_tie_keeps_the_order() -> None:
    def end(part: int, end: str, key: str | None) -> dict:
        return {"part": part, "end": end, "name": f"{end}{part}", "key": key, "at": "2026-01-01"}

    oldest = extremes([end(0, "oldest", "A"), end(1, "oldest", None)], ["Person", "Organization"])
    assert oldest["oldest"]["name"] == "oldest1"  # no key ranks as "": before "A"
    newest = extremes([end(0, "newest", None), end(1, "newest", "A")], ["Person", "Organization"])
    assert newest["newest"]["name"] == "newest1"
    newest = extremes([end(0, "newest", "A"), end(1, "newest", None)], ["Person", "Organization"])
    assert newest["newest"]["name"] == "newest0"
    tied = [end(0, "oldest", "k"), end(1, "oldest", "k"), end(0, "newest", "k"), end(1, "newest", "k")]
    picked = extremes(tied, ["Person", "Organization"])
    assert (picked["oldest"]["label"], picked["newest"]["label"]) == ("Person", "Organization")

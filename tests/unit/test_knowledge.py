"""The knowledge properties' pure decisions: tag normalisation, tag sets, the read filter's parameters."""

import pytest

from write_gate.core.knowledge import (
    EntityFilter,
    depth_first,
    knowledge_values,
    normalize_tags,
    stored_tags,
    with_tags,
    without_tags,
)
from write_gate.core.model import ErrorCode, GateRejection


def test_tags_are_trimmed_lowercased_distinct_and_keep_the_order_given() -> None:
    """Seed 004 only lower-cases them: ["Work", "Important"] reads back ["work", "important"], not sorted."""
    assert normalize_tags([" Math", "math ", "ÉCOLE", "b"]) == ["math", "école", "b"]
    assert normalize_tags(["Work", "Important"]) == ["work", "important"]


def test_an_empty_tag_is_refused_naming_its_place_not_its_value() -> None:
    with pytest.raises(GateRejection) as caught:
        normalize_tags(["ok", " \t "])
    assert caught.value.rejected.error_code is ErrorCode.INVALID_INPUT
    assert caught.value.rejected.details == {"field": "tags.1"}
    assert caught.value.rejected.message == "a tag is empty"


def test_every_write_path_normalises_tags_and_bounds_importance() -> None:
    assert knowledge_values({"tags": [" B", "a", "b"], "importance": 10, "x": 1}, "properties") == {
        "tags": ["b", "a"],
        "importance": 10,
        "x": 1,
    }
    for bad in ({"importance": 10.5}, {"importance": -1}, {"importance": "high"}, {"importance": True}):
        with pytest.raises(GateRejection) as caught:
            knowledge_values(bad, "properties")
        assert caught.value.rejected.error_code is ErrorCode.INVALID_INPUT
        assert caught.value.rejected.details == {"field": "properties.importance"}
        assert "set_importance" in caught.value.rejected.message
    for bad in ({"tags": "a"}, {"tags": [1]}):
        with pytest.raises(GateRejection) as caught:
            knowledge_values(bad, "properties")
        assert "add_tags" in caught.value.rejected.message


def test_a_declared_type_holds_but_a_number_is_still_bounded() -> None:
    assert knowledge_values({"tags": "x", "importance": "high"}, "p", declared={"tags", "importance"}) == {
        "tags": "x",
        "importance": "high",
    }
    with pytest.raises(GateRejection):
        knowledge_values({"importance": 11}, "p", declared={"importance"})


def test_stored_tags_ignore_what_is_not_a_list_of_strings() -> None:
    assert stored_tags({"tags": "math"}) == []
    assert stored_tags({"tags": ["a", 1]}) == []
    assert stored_tags({}) == []


def test_tags_are_added_after_those_held_and_removed_keeping_the_rest() -> None:
    assert with_tags({"tags": ["b", "a"]}, ["c", "a"]) == ["b", "a", "c"]
    assert without_tags({"tags": ["a", "b", "c"]}, ["b", "x"]) == ["a", "c"]


def test_the_filter_is_inactive_until_one_criterion_is_given_and_folds_its_tags() -> None:
    assert not EntityFilter().active
    assert EntityFilter(min_importance=0).active
    params = EntityFilter(("  Straße ",), None, 5).params()
    assert params == {"k_tags": ["strasse"], "k_min_importance": None, "k_max_importance": 5}
    assert EntityFilter(min_importance=2).params() == {"k_tags": None, "k_min_importance": 2, "k_max_importance": None}


def test_descendants_are_ordered_depth_first_with_siblings_by_name() -> None:
    def row(*path: tuple[str, int]) -> dict:
        # As the read answers a path: from the descendant up to the node (id 0, "root").
        steps = [*reversed(path), ("root", 0)]
        return {"path_names": [n for n, _ in steps], "path_ids": [i for _, i in steps]}

    a, b, a1, a2, a11 = ("a", 1), ("b", 2), ("a1", 3), ("a2", 4), ("a11", 5)
    rows = [row(b), row(a, a2), row(a), row(a, a1, a11), row(a, a1)]
    assert [r["path_names"][0] for r in depth_first(rows)] == ["a", "a1", "a11", "a2", "b"]


def test_siblings_come_in_creation_order_each_followed_by_its_subtree() -> None:
    """As memory-mcp filters its list of entities: by id (creation), not by name."""

    def row(*ids: int) -> dict:
        return {"path_names": ["x"] * (len(ids) + 1), "path_ids": [*ids, 0]}

    rows = [row(1), row(2), row(5, 2), row(4, 2), row(3, 1)]  # path_ids from the descendant up to the root (0)
    assert [r["path_ids"][0] for r in depth_first(rows)] == [1, 3, 2, 4, 5]


def test_a_neighbour_is_admitted_by_the_test_its_matches_passed() -> None:
    ada = {"_f_tags": ["pioneer"], "importance": 9}
    assert EntityFilter().admits({})
    assert EntityFilter(("PIONEER", "x")).admits(ada)
    assert not EntityFilter(("x",)).admits(ada)
    assert not EntityFilter(("pioneer",)).admits({"tags": "pioneer"})  # no folded list: no tags
    assert EntityFilter(None, 9, 9).admits(ada)
    assert not EntityFilter(None, 9.5).admits(ada)
    assert not EntityFilter(None, None, 8).admits(ada)
    assert not EntityFilter(None, 0).admits({})  # no importance: outside any bound
    assert not EntityFilter(None, 0).admits({"importance": True})

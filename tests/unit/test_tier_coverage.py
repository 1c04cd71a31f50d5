"""The tier rule's check (tests/tier_coverage.py): which modules missed which tiers."""

from tests.tier_coverage import missing


def test_a_module_seen_on_every_tier_that_ran_passes() -> None:
    sent = {"embedded": {"a", "b"}, "falkordb": {"a", "b"}, "bolt": {"b", "a"}}
    assert missing(sent) == {}


def test_a_module_missing_a_tier_is_named_with_the_tiers_it_missed() -> None:
    sent = {"embedded": {"a", "b"}, "falkordb": {"a"}, "bolt": {"a"}}
    assert missing(sent) == {"b": ["bolt", "falkordb"]}


def test_a_tier_that_did_not_run_at_all_is_not_asked_for() -> None:
    assert missing({"embedded": {"a"}}) == {}
    assert missing({}) == {}


def test_statements_whose_tier_is_unknown_count_nowhere() -> None:
    assert missing({"embedded": {"a"}, "unknown": {"b"}}) == {}

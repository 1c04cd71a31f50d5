"""memory-mcp's entity similarity (seed 004): the weighted score, its parts, and find_pairs scoring with it."""

import json

import pytest

from write_gate.core.entity_similarity import jaccard, name_similarity, similarity
from write_gate.core.resolution import Node, find_pairs, groups_like_memory_mcp, make_node


@pytest.mark.parametrize(
    "a, b, figure",
    [
        ("John Smith", "Jon Smith", 0.9),  # one deletion in ten characters
        ("ALICE", "alice", 1.0),  # lower-cased first
        ("abc", "xyz", 0.0),
        ("Smith John", "John Smith", 0.0),  # an edit distance: word order counts, unlike the gate's own score
    ],
)
def test_the_name_part_is_one_minus_the_edit_distance_over_the_longer_length(a: str, b: str, figure: float) -> None:
    assert name_similarity(a, b) == pytest.approx(figure)


def test_jaccard_of_two_empty_sets_is_zero() -> None:
    assert jaccard(frozenset(), frozenset()) == 0.0
    assert jaccard({"a", "b"}, {"b", "c"}) == pytest.approx(1 / 3)


def test_the_score_weighs_name_type_observations_and_tags_as_the_seed_says() -> None:
    score, parts = similarity(
        ("John Smith", "Jon Smith"), True, ({"engineer"}, {"engineer", "cyclist"}), ({"a"}, {"a"})
    )
    assert parts == {"name_similarity": 0.9, "same_type": 1.0, "shared_observations": 0.5, "shared_tags": 1.0}
    assert score == pytest.approx(0.9 * 0.4 + 0.3 + 0.5 * 0.2 + 0.1)  # 0.86
    other_type, _ = similarity(("John Smith", "Jon Smith"), False, (set(), set()), (set(), set()))
    assert other_type == pytest.approx(0.36)


def person(
    i: int,
    name: str,
    observations: list[str],
    tags: list[str] | None = None,
    label: str = "Person",
    created: str | None = None,
) -> Node:
    return make_node(i, label, json.dumps({"name": name}), name, {}, observations, tags, created)


def test_find_pairs_as_memory_mcp_groups_only_what_its_score_passes() -> None:
    """Near names with the same observations pass 0.8; near names alone do not (at most 0.7 with nothing else
    shared), though the gate's own name score pairs them; another label is never compared unless asked."""
    nodes = [
        person(1, "John Smith", ["works at Acme"]),
        person(2, "Jon Smith", ["works at Acme"]),
        person(3, "Jon Smyth", ["likes tea"]),
        person(4, "Jon Smith", ["works at Acme"], label="Project"),
    ]
    pairs, compared = find_pairs(nodes, across_labels=False, threshold=0.8, limit=10, memory_mcp=True)
    assert [(p.a.name, p.b.name, p.score) for p in pairs] == [("John Smith", "Jon Smith", 0.86)]
    assert compared == 3  # every pair of a label: no name block needed
    by_name, _ = find_pairs(nodes, across_labels=False, threshold=0.8, limit=10)
    assert ("Jon Smith", "Jon Smyth") in {(p.a.name, p.b.name) for p in by_name}  # the gate's score: by name alone
    across, _ = find_pairs(nodes, across_labels=True, threshold=0.6, limit=10, memory_mcp=True)
    scores = {(p.a.label, p.a.name, p.b.label, p.b.name): p.score for p in across}
    assert scores[("Person", "Jon Smith", "Project", "Jon Smith")] == pytest.approx(0.6)  # no type part


def test_find_pairs_as_memory_mcp_compares_a_large_label_by_sorted_neighbourhood() -> None:
    """Past MAX_BLOCK nodes a label is not compared all against all: its cost stays bounded."""
    nodes = [person(i, f"Person {i:04d}", []) for i in range(400)]
    _, compared = find_pairs(nodes, across_labels=False, threshold=0.8, limit=10, memory_mcp=True)
    assert compared < 400 * 399 // 2 // 10


def test_groups_as_memory_mcp_are_greedy_not_transitive() -> None:
    """The audit's chain aaaa ~ aaab ~ aabb (aaaa ~ aabb scores 0.7, under 0.79): memory-mcp's first entity takes
    aaab only, and aabb, left alone, makes no group; the pairs' transitive closure would join all three."""
    nodes = [person(i, name, ["same"]) for i, name in enumerate(["aaaa", "aaab", "aabb"])]
    pairs, _ = find_pairs(nodes, across_labels=False, threshold=0.79, limit=10, memory_mcp=True)
    assert {(p.a.name, p.b.name) for p in pairs} == {("aaaa", "aaab"), ("aaab", "aabb")}
    assert groups_like_memory_mcp(pairs, nodes, across_labels=False) == [["aaaa", "aaab"]]
    assert groups_like_memory_mcp([], nodes, across_labels=False) == []


def test_groups_as_memory_mcp_follow_insertion_order_and_buckets_by_type() -> None:
    """Entities in creation order (then engine id, for one statement's nodes sharing a stamp), so the earliest of
    a chain takes its neighbour; the types' buckets come in the order their first entity was created."""
    t1, t2 = "2025-01-01T00:00:01Z", "2025-01-01T00:00:02Z"
    nodes = [
        person(9, "aaaa", ["same"], created=t2),  # created last though numbered first
        person(1, "aabb", ["same"], created=t1),
        person(2, "aaab", ["same"], created=t1),
        person(5, "Acme", ["same"], label="Organization", created=t1),
        person(3, "Acmee", ["same"], label="Organization", created=t1),
    ]
    pairs, _ = find_pairs(nodes, across_labels=False, threshold=0.79, limit=10, memory_mcp=True)
    assert groups_like_memory_mcp(pairs, nodes, across_labels=False) == [["aabb", "aaab"], ["Acmee", "Acme"]]
    earlier = make_node(7, "Organization", "{}", "Initech", {}, [], [], "2025-01-01T00:00:00Z")  # in no pair
    assert groups_like_memory_mcp(pairs, [*nodes, earlier], across_labels=False) == [
        ["Acmee", "Acme"],
        ["aabb", "aaab"],
    ]

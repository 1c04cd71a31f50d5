"""Entity resolution's pure parts: normalisation, blocking, scores, ordering, thresholds, merge plans, and what
compress_graph reports."""

import pytest

from write_gate.core import resolution
from write_gate.core.compression import Compression, GroupCompressed, combined_observations, json_size, tally
from write_gate.core.cypher.resolution import fingerprint
from write_gate.core.merging import Conflict, Group, Link, RelationshipConflict, plan_relationships, union
from write_gate.core.resolution import (
    Signal,
    block_keys,
    candidate_pairs,
    duplicate_groups,
    find_pairs,
    make_node,
    name_similarity,
    normalise,
    score_pair,
)


@pytest.mark.parametrize(
    "raw, normalised",
    [
        ("  ACME, Inc. ", "acme inc"),
        ("Acme\tInc", "acme inc"),
        ("ＡＣＭＥ", "acme"),  # NFKC: full-width letters
        ("Straße", "strasse"),  # full case folding
        ("O'Brien-Smith", "o brien smith"),
        ("Émile", "émile"),  # accents stay: identity is exact, so is this
        ("!!!", ""),
    ],
)
def test_normalise(raw: str, normalised: str) -> None:
    assert normalise(raw) == normalised


@pytest.mark.parametrize(
    "a, b, score",
    [
        ("acme", "acmee", 0.8889),
        ("acme inc", "acme ltd", 0.625),  # a different word costs a lot
        ("john smith", "smith john", 1.0),  # word order does not matter
        ("al", "al", 1.0),
        ("globex", "acme", 0.2),
    ],
)
def test_name_similarity_is_token_sort_ratio(a: str, b: str, score: float) -> None:
    assert name_similarity(a, b) == score


def node(i: int, label: str, name: str, **shared: str) -> resolution.Node:
    return make_node(i, label, '{"name":%s}' % ('"' + name + '"'), name, shared)


def test_a_pair_is_explained_by_every_signal_with_its_figure() -> None:
    pair = score_pair(
        node(2, "Person", "Jo Smith", email="JO@x.org"), node(1, "Person", "jo  smith", email="jo@x.org/")
    )
    assert (pair.a.name, pair.b.name) == ("Jo Smith", "jo  smith")  # ordered by label and key, not by id
    assert pair.signals == (Signal("same_name", 1.0), Signal("name_similarity", 1.0), Signal("shared_email", 1.0))
    assert pair.score == 1.0
    fuzzy = score_pair(node(1, "Organization", "Acme"), node(2, "Organization", "Acmee"))
    assert (fuzzy.score, fuzzy.signals) == (0.8889, (Signal("name_similarity", 0.8889),))


def test_names_fall_back_to_merge_key_values() -> None:
    made = make_node(1, "City", '{"country":"NL","name":"Delft"}', None, {})
    assert (made.name, made.normalised) == ("NL Delft", "nl delft")


def near_names() -> list[resolution.Node]:
    """Three organisations a letter or a word apart, two people sharing an email."""
    return [
        node(1, "Organization", "Acme"),
        node(2, "Organization", "Acmee"),
        node(3, "Organization", "Acme Corp"),
        node(4, "Person", "Ann", email="a@x.org"),
        node(5, "Person", "Anne-Marie", email="a@x.org"),
    ]


def test_pairs_are_ordered_bounded_and_thresholded() -> None:
    nodes = [*near_names(), node(6, "Entity", "Acme")]
    pairs, compared = find_pairs(nodes, across_labels=False, threshold=0.8, limit=10)
    listed = [(p.a.name, p.b.name, p.score) for p in pairs]
    assert listed == [("Ann", "Anne-Marie", 1.0), ("Acme", "Acmee", 0.8889)]
    assert compared == 4  # Acme/Acmee, Acme/Acme Corp, Acmee/Acme Corp (word "acme"), Ann/Anne-Marie
    lower = find_pairs(nodes, across_labels=False, threshold=0.6, limit=10)[0]
    assert [(p.a.name, p.b.name, p.score) for p in lower][2:] == [("Acme Corp", "Acme", 0.6154)]  # Acmee: 0.5714
    across, _ = find_pairs(nodes, across_labels=True, threshold=0.95, limit=10)
    assert [(p.a.label, p.b.label, p.score) for p in across] == [
        ("Entity", "Organization", 1.0),
        ("Person", "Person", 1.0),
    ]
    assert len(find_pairs(nodes, across_labels=True, threshold=0.0, limit=2)[0]) == 2


def test_groups_join_pairs_that_share_a_node_in_the_order_the_pairs_meet_them() -> None:
    """memory-mcp's string[][]: Acme, Acmee and Acme Corp are one group through their pairs, Ann and Anne-Marie
    another; the best pair's group comes first."""
    pairs, _ = find_pairs(near_names(), across_labels=False, threshold=0.6, limit=10)
    assert duplicate_groups(pairs) == [["Ann", "Anne-Marie"], ["Acme", "Acmee", "Acme Corp"]]
    assert duplicate_groups([]) == []
    two_acmes = [node(1, "Organization", "Acme"), node(6, "Entity", "Acme")]
    same_name, _ = find_pairs(two_acmes, across_labels=True, threshold=0.9, limit=10)
    assert duplicate_groups(same_name) == [["Acme", "Acme"]]  # two nodes, one name: both listed


def test_blocks_keep_labels_apart_unless_asked() -> None:
    a, b = node(1, "Person", "Al"), node(2, "Entity", "Al")
    assert block_keys(a, False).isdisjoint(block_keys(b, False))
    assert ("name", "*", "al") in block_keys(a, True) & block_keys(b, True)


def test_a_large_block_is_a_sorted_neighbourhood_not_all_pairs() -> None:
    many = [node(i, "Person", f"john {i:04d}") for i in range(1000)]  # one word block of 1,000 "john"s
    pairs = candidate_pairs(many, across_labels=False)
    assert len(pairs) <= 1000 * resolution.WINDOW * 2 < 1000 * 999 // 2


def _order(pair: resolution.Pair) -> tuple[tuple[str, str], tuple[str, str]]:
    return (pair.a.order, pair.b.order)


def test_two_windows_compare_only_their_pairs_across_and_window_pairs_cover_one_pass() -> None:
    """With `others`, only a node of each window is paired; over every window against itself and every later one,
    the pairs (and the comparisons) are exactly one pass's, each once, while no block grows past MAX_BLOCK."""
    names = ["Acme", "Acmee", "Acme Corp", "Globex", "Globexx", "Initech", "Inittech", "Acne", "Glob", "Initec"]
    nodes = [node(i, "Organization", name) for i, name in enumerate(names)] + [
        node(20, "Person", "Ann", email="a@x.org"),
        node(21, "Person", "Anne-Marie", email="a@x.org"),
        node(22, "Entity", "Acme"),
    ]
    for across_labels in (False, True):
        whole, compared = find_pairs(nodes, across_labels=across_labels, threshold=0.5, limit=500)
        assert len(whole) > 5
        for size in (1, 2, 3, 5):
            windows = [nodes[start : start + size] for start in range(0, len(nodes), size)]
            found, total = [], 0
            for i, window in enumerate(windows):
                for j, other in enumerate(windows[i:], start=i):
                    pairs, count = find_pairs(
                        window,
                        others=None if j == i else other,
                        across_labels=across_labels,
                        threshold=0.5,
                        limit=500,
                    )
                    assert all((p.a in window) != (p.b in window) for p in pairs) or j == i
                    found += pairs
                    total += count
            assert sorted(found, key=_order) == sorted(whole, key=_order), (across_labels, size)
            assert total == compared, (across_labels, size)


def test_union_keeps_the_survivors_values_and_reports_the_others() -> None:
    survivor = {"name": "Alice", "age": 30, "_key": "a", "confidence": 0.9}
    claim = ["crm-bot", "crm", "api", 0.9, "2026-11-01T00:00:00.000Z"]
    merged = {"name": "Alicia", "age": 31, "email": "a@x.org", "_f_email": ["a@x.org"], "_p_email": claim, "_key": "b"}
    merged |= {"_p_age": ["other", "x", "llm", 0.1, "2026-11-02T00:00:00.000Z"], "source": "x"}
    fill, conflicts = union(survivor, merged)
    assert fill == {"email": "a@x.org", "_f_email": ["a@x.org"], "_p_email": claim}  # the value with its claim
    assert conflicts == [Conflict("age", 30, 31), Conflict("name", "Alice", "Alicia")]


def test_relationships_are_grouped_by_type_and_direction() -> None:
    links = [
        Link(10, "KNOWS", True, 3, {"since": 2019, "confidence": 0.5}, {"since": 2020}),
        Link(11, "KNOWS", False, 4, {"weight": 1.0}, None),
        Link(12, "WORKS_FOR", True, 5, {}, None),
        Link(13, "KNOWS", True, 1, {}, None),  # to the survivor (id 1): dropped
    ]
    plan = plan_relationships(links, survivor_id=1, merged_id=2)
    assert plan.groups == (
        Group("KNOWS", False, ("weight",)),
        Group("KNOWS", True, ("confidence", "since")),
        Group("WORKS_FOR", True, ()),
    )
    assert (plan.moved, plan.merged, plan.dropped) == (2, 1, (("KNOWS", "out"),))
    assert [(c.property, c.survivor, c.merged) for c in plan.conflicts] == [("since", 2020, 2019)]
    assert plan.types == ("KNOWS", "WORKS_FOR")


def test_a_pair_is_ordered_whichever_way_it_is_given() -> None:
    first, second = node(1, "Person", "Ann"), node(2, "Person", "Bob")
    assert (score_pair(second, first).a, score_pair(second, first).b) == (first, second)
    assert (score_pair(first, second).a, score_pair(first, second).b) == (first, second)


def test_only_signals_that_matched_are_listed() -> None:
    """No name (both, or one): no name signal, not even a 0 or a 1; unlike names sharing an email: the email
    only; a property one node has and the other lacks: nothing; no signal at all: score 0."""
    nameless = make_node(1, "Person", "h:1", "!!!", {"email": "a@x.org"})
    also_nameless = make_node(2, "Person", "h:2", "...", {"email": "a@x.org"})
    assert score_pair(nameless, also_nameless).signals == (Signal("shared_email", 1.0),)
    named = node(3, "Person", "Ann", email="a@x.org")
    assert score_pair(nameless, named).signals == (Signal("shared_email", 1.0),)
    unlike = score_pair(node(4, "Person", "abc", email="a@x.org"), node(5, "Person", "xyz", email="a@x.org"))
    assert unlike.signals == (Signal("shared_email", 1.0),)
    lopsided = score_pair(node(6, "Person", "abc", url="u"), node(7, "Person", "xyz", email="a@x.org"))
    assert (lopsided.signals, lopsided.score) == ((), 0.0)
    assert score_pair(make_node(8, "P", "h:8", "!", {}), make_node(9, "P", "h:9", "?", {})).score == 0.0


def test_a_pair_exactly_at_the_threshold_is_kept() -> None:
    nodes = [node(1, "Person", "abcde"), node(2, "Person", "abcdx")]  # ratio 80.0
    assert [p.score for p in find_pairs(nodes, across_labels=False, threshold=0.8, limit=5)[0]] == [0.8]


def test_the_threshold_compares_the_score_rounded_to_four_decimals() -> None:
    nodes = [node(1, "Person", "abcdefg"), node(2, "Person", "abcdefx")]  # ratio 85.714...: 0.8571
    assert find_pairs(nodes, across_labels=False, threshold=0.8571, limit=5)[0] != []
    assert find_pairs(nodes, across_labels=False, threshold=0.85712, limit=5)[0] == []


def test_a_threshold_of_zero_keeps_a_pair_under_one_percent() -> None:
    nodes = [node(1, "Person", "abcd" + "x" * 400), node(2, "Person", "abcd" + "y" * 400)]  # 8 / 808: 0.0099
    [pair] = find_pairs(nodes, across_labels=False, threshold=0.0, limit=5)[0]
    assert pair.score == 0.0099


def test_a_threshold_of_zero_still_leaves_out_a_pair_whose_score_rounds_to_zero() -> None:
    nodes = [node(1, "Person", "abcd"), node(2, "Person", "abcd" + "x" * 200_000)]  # 8 / 200,008: 0.00004
    assert find_pairs(nodes, across_labels=False, threshold=0.0, limit=5) == ([], 1)


def test_nameless_nodes_pair_only_on_a_shared_value() -> None:
    """No name, no name block: two nameless nodes are compared only when they share a key value (two empty
    names are never scored as alike)."""
    same = [
        make_node(1, "Person", "h:1", "!!!", {"email": "a@x.org"}),
        make_node(2, "Person", "h:2", "?", {"email": "a@x.org"}),
    ]
    [pair] = find_pairs(same, across_labels=False, threshold=0.0, limit=5)[0]
    assert (pair.score, pair.signals) == (1.0, (Signal("shared_email", 1.0),))
    apart = [
        make_node(1, "Person", "h:1", "!!!", {"email": "a@x.org"}),
        make_node(2, "Person", "h:2", "?", {"email": "b@x.org"}),
    ]
    assert find_pairs(apart, across_labels=False, threshold=0.0, limit=5) == ([], 0)


def test_a_link_in_to_the_survivor_is_dropped_as_incoming() -> None:
    plan = plan_relationships([Link(10, "KNOWS", False, 1, {}, None)], survivor_id=1, merged_id=2)
    assert plan.dropped == (("KNOWS", "in"),)


def test_a_node_is_made_with_its_id_and_its_own_name_before_its_keys() -> None:
    made = make_node(7, "Person", '{"name":"Bob"}', "Ann Lee", {"email": " A@X.org/ ", "url": 3})
    assert (made.id, made.name, made.normalised, made.sorted_words) == (7, "Ann Lee", "ann lee", "ann lee")
    assert made.shared == {"email": "a@x.org"}  # a value that is no text is no shared value


def test_a_nodes_blocks_are_its_name_its_words_prefixes_and_its_shared_values() -> None:
    made = make_node(1, "Person", "h:1", "Annabel Lee", {"email": "a@x.org"})
    assert block_keys(made, False) == {
        ("name", "Person", "annabel lee"),
        ("word", "Person", "anna"),
        ("word", "Person", "lee"),
        ("prop", "Person", "email", "a@x.org"),
    }


def test_a_block_of_max_block_nodes_is_compared_whole() -> None:
    nodes = [node(i, "Person", f"john {i:04d}") for i in range(resolution.MAX_BLOCK)]
    assert len(candidate_pairs(nodes, across_labels=False)) == resolution.MAX_BLOCK * (resolution.MAX_BLOCK - 1) // 2


def test_a_larger_block_pairs_each_node_with_the_next_window_in_name_order() -> None:
    count = resolution.MAX_BLOCK + 1
    names = [f"john {(i * 37) % count:04d}" for i in range(count)]  # name order is not the list's order
    nodes = [node(i, "Person", name) for i, name in enumerate(names)]
    by_name = sorted(range(count), key=lambda i: names[i])
    expected = {
        (min(i, j), max(i, j)) for pos, i in enumerate(by_name) for j in by_name[pos + 1 : pos + 1 + resolution.WINDOW]
    }
    assert candidate_pairs(nodes, across_labels=False) == expected


def test_a_plan_counts_every_fold_and_names_each_conflicts_relationship() -> None:
    links = [
        Link(1, "KNOWS", True, 2, {}, None),  # between the two nodes: dropped, the rest still planned
        Link(2, "KNOWS", False, 7, {"since": 2019, "last_updated": "t1"}, {"since": 2020, "last_updated": "t2"}),
        Link(3, "LIKES", True, 8, {"level": 1}, {"level": 1}),
    ]
    plan = plan_relationships(links, survivor_id=1, merged_id=2)
    assert (plan.moved, plan.merged, plan.dropped) == (0, 2, (("KNOWS", "out"),))
    assert plan.conflicts == (RelationshipConflict("KNOWS", "in", 7, "since", 2020, 2019),)


def test_keys_that_are_no_json_object_name_nothing() -> None:
    assert resolution.keys_of('["x"]') is None and resolution.name_text(None, '["x"]') == ""


def test_a_relationships_fingerprint_is_its_id_and_stamp() -> None:
    assert (fingerprint(3, "2026-01-01"), fingerprint(3, None)) == ("3@2026-01-01", "3@")


def test_a_conflict_on_an_outgoing_relationship_says_out() -> None:
    plan = plan_relationships([Link(4, "LIKES", True, 9, {"level": 1}, {"level": 2})], survivor_id=1, merged_id=2)
    assert plan.conflicts == (RelationshipConflict("LIKES", "out", 9, "level", 2, 1),)


# --- compress_graph's figures (core.compression) ---------------------------------------------


def test_a_compression_adds_up_its_groups_as_memory_mcp_reports_them() -> None:
    """Every entity of a group is a duplicate, all but the first merged away; the observations saved are those the
    group held beyond its survivor's after, never below 0 (an observation written meanwhile)."""
    groups = [
        GroupCompressed(("John", "Jon"), (3, 2), 3, relations=3, size=120),
        GroupCompressed(("a", "b", "c"), (1, 1, 1), 1, relations=0, size=80),
        GroupCompressed(("x", "y"), (0, 0), 1, relations=1, size=40),
    ]
    assert tally(groups) == Compression(
        duplicates_found=7, entities_merged=4, observations_compressed=4, relations_consolidated=4, space_freed=240
    )
    assert tally([]) == Compression(0, 0, 0, 0, 0)


def test_combined_observations_count_each_once_and_sizes_are_compact_utf8_json() -> None:
    assert combined_observations([["a", "b", "c"], ["b", "a"], []]) == 3 and combined_observations([]) == 0
    assert json_size({"name": "Zoë", "observations": []}) == len('{"name":"Zoë","observations":[]}'.encode())

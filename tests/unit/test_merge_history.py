"""A merge's change records (pure): what the survivor gains, each relationship of the merged node as deleted, and
what the survivor's relationships gain in their place; nothing for a value it already had. One record per
subject; `value_changes` reads each as the values the tools answer."""

from write_gate.core.claims import claim_name
from write_gate.core.history import Subject, value_changes
from write_gate.core.merge_history import End, MergeContext, held_open, merge_changes
from write_gate.core.merging import Link, combined, union

CLAIM = ["crm-bot", "crm", "manual", 0.8, "2026-01-01T00:00:00.000Z"]
CTX = MergeContext("c1", "2026-02-01T00:00:00.000Z", "lead", End("Organization", "acme"), End("Organization", "acmee"))
BOB = End("Person", "bob")
ALICE = End("Person", "alice")
SHARED = {"change_id": "c1", "at": "2026-02-01T00:00:00.000Z", "seq": "2026-02-01T00:00:00.000Z", "agent": "lead"}


def rel(type_: str, start: End, end: End) -> dict:
    return {
        "subject": "relationship",
        "label": type_,
        "from_label": start.label,
        "from_key": start.key,
        "to_label": end.label,
        "to_key": end.key,
    }


def test_the_survivor_gains_the_values_it_lacked_with_their_claims() -> None:
    fill = {"founded": 1990, "_p_founded": CLAIM, "_f_founded": ["1990"], "url": "https://acme.example"}
    [record] = merge_changes(CTX, fill, [], 1, 2)
    node = {"subject": "node", "label": "Organization", "key": "acme"}
    assert record == {
        **SHARED,
        "op": "set",
        **node,
        "properties": ["founded", "url"],
        "before_values": [[], []],
        "after_values": [[1990], ["https://acme.example"]],
        "before_claims": [[], []],
        "claims": [CLAIM, []],  # url had no claim on the merged node: none is made up
    }
    founded, url = value_changes(record)
    assert "claim" not in url
    assert founded == {
        **SHARED,
        "op": "set",
        "subject": "node",
        "label": "Organization",
        "key": "acme",
        "property": "founded",
        "after": 1990,
        "claim": CLAIM,
    }


def test_a_moved_relationship_is_deleted_and_made_again_on_the_survivor() -> None:
    link = Link(10, "WORKS_FOR", False, 5, {"since": 2019, "_p_since": CLAIM, "_rev": 3}, None)
    gone, made = (change for record in merge_changes(CTX, {}, [(link, BOB)], 1, 2) for change in value_changes(record))
    old, new = rel("WORKS_FOR", BOB, CTX.merged), rel("WORKS_FOR", BOB, CTX.survivor)
    assert gone == {**SHARED, "op": "delete", **old, "property": "since", "before": 2019, "before_claim": CLAIM}
    assert made == {**SHARED, "op": "set", **new, "property": "since", "after": 2019, "claim": CLAIM}


def test_a_relationship_folded_into_the_survivors_records_only_what_it_lacked() -> None:
    twin = {"since": 2020, "role": "cto"}
    link = Link(11, "WORKS_FOR", False, 6, {"since": 2021, "role": "cto", "team": "r&d"}, twin)
    records = merge_changes(CTX, {}, [(link, ALICE)], 1, 2)
    assert len(records) == 2  # one per subject: the relationship that went, the one that gained
    changes = [change for record in records for change in value_changes(record)]
    assert [(c["op"], c["property"]) for c in changes] == [
        ("delete", "role"),
        ("delete", "since"),
        ("delete", "team"),
        ("set", "team"),
    ]
    assert changes[-1]["to_key"] == "acme" and "claim" not in changes[-1]  # it had no claim: none is made up


def test_a_relationship_between_the_two_nodes_is_recorded_as_deleted_only() -> None:
    link = Link(12, "PARTNER_OF", True, 1, {"since": 2000}, None)
    [gone] = merge_changes(CTX, {}, [(link, CTX.survivor)], 1, 2)
    assert gone["op"] == "delete" and gone["from_key"] == "acmee" and gone["to_key"] == "acme"


def test_a_merge_holds_each_differing_claimed_value_open_and_only_reports_an_unclaimed_one() -> None:
    api = ["api-bot", "api", "manual", 0.75, "2026-01-01T00:00:00.000Z"]
    llm = ["llm-bot", "llm", "llm", 0.06, "2026-01-02T00:00:00.000Z"]
    survivor = {"name": "Jo", claim_name("name"): api, "age": 30, claim_name("age"): api, "city": "Oslo"}
    merged = {"name": "Joe", claim_name("name"): llm, "age": 31, claim_name("age"): llm, "city": "Rome"}
    merged[claim_name("city")] = llm
    _, conflicts = union(survivor, merged)
    ids = iter(["c1", "c2"])
    held = held_open(
        Subject.node("Person", "k"),
        survivor,
        merged,
        conflicts,
        "m1",
        "2026-11-24T00:00:00.000Z",
        ids.__next__,
        ("name",),
    )
    # city's survivor value has no claim, and name is the survivor's identity: both reported, neither held.
    assert list(held) == ["age"]
    record, conflict_id = held["age"]
    assert conflict_id == "c1"
    assert record == {
        "conflict_id": "c1",
        "change_id": "m1",
        "at": "2026-11-24T00:00:00.000Z",
        "status": "open",
        "subject": "node",
        "label": "Person",
        "key": "k",
        "property": "age",
        "policy": "keep_both",
        "outcome": "open",
        "current_value": 30,
        "current_claim": api,
        "incoming_value": 31,
        "incoming_claim": llm,
    }


def test_values_not_held_do_not_stop_the_ones_after_them_from_being_held() -> None:
    api = ["api-bot", "api", "manual", 0.75, "2026-01-01T00:00:00.000Z"]
    llm = ["llm-bot", "llm", "llm", 0.06, "2026-01-02T00:00:00.000Z"]
    survivor = {"a_key": 1, claim_name("a_key"): api, "b_plain": 1, "z_held": 1, claim_name("z_held"): api}
    merged = {"a_key": 2, claim_name("a_key"): llm, "b_plain": 2, "z_held": 2, claim_name("z_held"): llm}
    _, conflicts = union(survivor, merged)
    assert [c.property for c in conflicts] == ["a_key", "b_plain", "z_held"]
    held = held_open(Subject.node("P", "k"), survivor, merged, conflicts, "m1", "t", lambda: "x1", ("a_key",))
    assert list(held) == ["z_held"]


def test_each_relationship_is_recorded_in_id_order_whatever_order_it_comes_in() -> None:
    links = [
        (Link(5, "LIKES", True, 8, {"level": 1}, None), ALICE),
        (Link(1, "PARTNER_OF", True, 1, {"since": 2000}, None), CTX.survivor),
        (Link(3, "KNOWS", False, 7, {"since": 2019}, None), BOB),
    ]
    records = merge_changes(CTX, {}, links, 1, 2)
    assert [(r["op"], r["label"], r["from_key"], r["to_key"]) for r in records] == [
        ("delete", "PARTNER_OF", "acmee", "acme"),
        ("delete", "KNOWS", "bob", "acmee"),
        ("set", "KNOWS", "bob", "acme"),
        ("delete", "LIKES", "acmee", "alice"),
        ("set", "LIKES", "acme", "alice"),
    ]


def test_observations_tags_and_importance_combine_where_both_hold_them_and_anything_else_conflicts() -> None:
    survivor = {"observations": ["a", "s"], "tags": ["x"], "importance": 2, "age": 30, claim_name("importance"): "mine"}
    merged = {"observations": ["b", "s"], "tags": ["w"], "importance": 8, "age": 31, claim_name("importance"): "theirs"}
    assert combined(survivor, merged) == {
        "observations": ["a", "s", "b"],
        "_f_observations": ["a", "s", "b"],
        "tags": ["x", "w"],
        "_f_tags": ["x", "w"],
        "importance": 8,
        claim_name("importance"): "theirs",
    }
    fill, conflicts = union(survivor, merged)
    assert fill == {} and [c.property for c in conflicts] == ["age"]
    # A lower importance, or lists the survivor already holds: nothing changes, and nothing conflicts.
    assert combined({**survivor, "importance": 9, "observations": ["s", "b"]}, {**merged, "observations": ["b"]}) == {
        "tags": ["x", "w"],
        "_f_tags": ["x", "w"],
    }
    # Values that are not lists of text (written around the tools) conflict as any other.
    _, odd = union({"observations": "text"}, {"observations": ["b"]})
    assert [c.property for c in odd] == ["observations"]


def test_the_merged_node_was_created_when_the_first_of_them_was() -> None:
    """Seed 004's merge: createdAt is the earliest; a later one, or a text that is no time, changes nothing."""
    early, late = "2026-11-20T08:00:00.000Z", "2026-11-21T08:00:00.000Z"
    assert combined({"created_at": late}, {"created_at": early}) == {"created_at": early}
    assert combined({"created_at": early}, {"created_at": late}) == {}
    assert combined({"created_at": late}, {"created_at": "yesterday"}) == {}
    assert combined({}, {"created_at": early}) == {}

"""A merge's change records (pure): what the survivor gains, each relationship of the merged node as deleted, and
what the survivor's relationships gain in their place; nothing for a value it already had."""

from write_gate.core.merge_history import End, MergeContext, merge_changes
from write_gate.core.merging import Link

CLAIM = ["crm-bot", "crm", "manual", 0.8, "2026-01-01T00:00:00.000Z"]
CTX = MergeContext("c1", "2026-02-01T00:00:00.000Z", "lead", End("Organization", "acme"), End("Organization", "acmee"))
BOB = End("Person", "bob")
ALICE = End("Person", "alice")
SHARED = {"change_id": "c1", "at": "2026-02-01T00:00:00.000Z", "agent": "lead"}


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
    fill = {"founded": 1990, "_p_founded": CLAIM, "_f_founded": ["1990"]}
    [founded] = merge_changes(CTX, fill, [], 1, 2)
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
    gone, made = merge_changes(CTX, {}, [(link, BOB)], 1, 2)
    old, new = rel("WORKS_FOR", BOB, CTX.merged), rel("WORKS_FOR", BOB, CTX.survivor)
    assert gone == {**SHARED, "op": "delete", **old, "property": "since", "before": 2019, "before_claim": CLAIM}
    assert made == {**SHARED, "op": "set", **new, "property": "since", "after": 2019, "claim": CLAIM}


def test_a_relationship_folded_into_the_survivors_records_only_what_it_lacked() -> None:
    twin = {"since": 2020, "role": "cto"}
    link = Link(11, "WORKS_FOR", False, 6, {"since": 2021, "role": "cto", "team": "r&d"}, twin)
    changes = merge_changes(CTX, {}, [(link, ALICE)], 1, 2)
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

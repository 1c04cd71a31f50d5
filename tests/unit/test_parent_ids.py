"""memory-mcp's `parentId` on the memory profile's reads (pure): each entity with its parent's name where it has
one, and no key at all where it has none, so the official server's clients read the same bytes as before; the
parent taken from the links the expand answered where they are all there."""

from typing import Any

from write_gate.services.reads import Expanded, GraphResult, first_parents, parents_expanded, to_entity, with_parents


def expanded() -> Expanded:
    entities = [to_entity(["Person"], {"name": name}) for name in ("Kid", "Alice", "Friend")]
    return Expanded(GraphResult(entities=entities, relations=[]), None, ids=(7, 3), neighbour_ids=(9,))


def test_an_entity_with_a_parent_carries_its_name_and_one_without_has_no_key() -> None:
    answer = with_parents(expanded(), {7: "Alice", 9: "Alice"}).result.model_dump(mode="json")
    assert [e.get("parentId") for e in answer["entities"]] == ["Alice", None, "Alice"]  # neighbours too
    assert "parentId" not in answer["entities"][1]
    assert list(answer["entities"][0])[:4] == ["name", "entityType", "observations", "parentId"]


def test_of_two_parents_the_lower_id_is_named_as_get_parent_answers_and_a_nameless_one_none() -> None:
    assert first_parents([(7, 5, "Later"), (7, 4, "First"), (3, 8, None)]) == {7: "First"}


def row(node: int, rid: int | None, rtype: str | None, start: int | None, other: int | None, name: Any = None) -> dict:
    return {"id": node, "more": False, "rid": rid, "rtype": rtype, "rstart": start, "mid": other, "mname": name}


def test_the_expand_rows_name_an_outgoing_hierarchy_link_and_say_whose_links_were_cut() -> None:
    rows = [
        row(7, 1, "CHILD_OF", 7, 3, "Alice"),  # Kid's own link up
        row(3, 1, "CHILD_OF", 7, 7, "Kid"),  # the same link seen from the parent: down, not Alice's parent
        row(3, 2, "KNOWS", 3, 9, "Friend"),
        {**row(9, None, None, None, None), "more": True},
    ]
    assert parents_expanded(rows, "CHILD_OF") == ({7: "Alice"}, {9})
    assert parents_expanded(rows, "PART_OF") == ({}, {9})

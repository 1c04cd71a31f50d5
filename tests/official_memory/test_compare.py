"""The comparison itself (pure): it undoes only what EXPECTED lists, and reports everything else."""

import re
from pathlib import Path
from typing import Any

import pytest

from tests.official_memory.compare import EXPECTED, Answer, Comparison, without_repeats
from tests.official_memory.listing import IDEMPOTENT_HERE, compare_listings


def ours_entity(name: str, label: str, observations: list[str], remapped_from: str | None = None) -> dict[str, Any]:
    properties = {"confidence": 0.3} | ({"_schema_remap_from": remapped_from} if remapped_from else {})
    return {
        "name": name,
        "entityType": label,
        "observations": observations,
        "labels": [label],
        "properties": properties,
    }


def theirs_entity(name: str, entity_type: str, observations: list[str]) -> dict[str, Any]:
    return {"name": name, "entityType": entity_type, "observations": observations}


def rel(start: str, end: str, kind: str, **properties: Any) -> dict[str, Any]:
    return {"from": start, "to": end, "relationType": kind, **({"properties": properties} if properties else {})}


def graph(entities: list[dict[str, Any]], relations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"entities": entities, "relations": relations or []}


def test_the_same_graph_has_no_difference() -> None:
    comparison = Comparison()
    same = graph([theirs_entity("Alice", "person", ["x"])], [rel("Alice", "Alice", "knows")])
    assert comparison.graphs(same, same) == []
    assert comparison.seen == set()


def test_a_canonical_type_is_undone_through_its_breadcrumb_and_noted() -> None:
    comparison = Comparison()
    ours = graph(
        [ours_entity("Paris", "Location", [], ":city")], [rel("Paris", "Paris", "KNOWS", _schema_remap_from=":knows")]
    )
    theirs = graph([theirs_entity("Paris", "city", [])], [rel("Paris", "Paris", "knows")])
    assert comparison.graphs(ours, theirs) == []
    assert comparison.seen == {"canonical_entity_type", "canonical_relation_type", "extra_keys"}


def test_a_breadcrumb_that_is_not_the_type_as_written_is_reported() -> None:
    ours = graph([ours_entity("Paris", "Location", [], ":town")])
    report = Comparison().graphs(ours, graph([theirs_entity("Paris", "city", [])]))
    assert report == [
        'entity \'Paris\': ours {"entityType": "town", "name": "Paris", "observations": []} '
        'theirs {"entityType": "city", "name": "Paris", "observations": []}'
    ]


def test_unexplained_differences_are_reported_entity_by_entity_and_relation_by_relation() -> None:
    ours = graph([theirs_entity("A", "t", ["x"]), theirs_entity("B", "t", [])], [rel("A", "B", "r")])
    theirs = graph([theirs_entity("A", "t", ["x", "y"]), theirs_entity("C", "t", [])], [rel("B", "A", "r")])
    assert sorted(Comparison().graphs(ours, theirs)) == sorted(
        [
            "entity 'B' only in ours: " + '{"entityType": "t", "name": "B", "observations": []}',
            "entity 'C' only in theirs: " + '{"entityType": "t", "name": "C", "observations": []}',
            'entity \'A\': ours {"entityType": "t", "name": "A", "observations": ["x"]} '
            'theirs {"entityType": "t", "name": "A", "observations": ["x", "y"]}',
            "relation ('A', 'B', 'r') only in ours",
            "relation ('B', 'A', 'r') only in theirs",
        ]
    )


def test_a_relation_ours_refused_is_set_aside_while_the_official_server_holds_it() -> None:
    comparison = Comparison()
    comparison.graphs(graph([theirs_entity("A", "t", [])]), graph([theirs_entity("A", "t", [])]))
    refusal = {
        "status": "rejected",
        "error_code": "ENDPOINT_NOT_FOUND",
        "message": "1 of 1 relations were rejected; nothing was written",
        "details": {"rejected": [{"index": 0, "status": "rejected", "error_code": "ENDPOINT_NOT_FOUND"}]},
    }
    args = {"relations": [rel("A", "Ghost", "knows")]}
    theirs = Answer(False, [rel("A", "Ghost", "knows")], {"relations": [rel("A", "Ghost", "knows")]})
    assert comparison.step("create_relations", args, Answer(True, refusal, refusal), theirs) == []
    with_dangling = graph([theirs_entity("A", "t", [])], [rel("A", "Ghost", "knows")])
    assert comparison.graphs(graph([theirs_entity("A", "t", [])]), with_dangling) == []
    assert comparison.seen == {"missing_endpoint"}


def test_a_missing_endpoint_the_official_graph_has_is_reported() -> None:
    comparison = Comparison()
    both = graph([theirs_entity("A", "t", []), theirs_entity("B", "t", [])])
    comparison.graphs(both, both)
    refusal = {
        "status": "rejected",
        "error_code": "ENDPOINT_NOT_FOUND",
        "message": "",
        "details": {"rejected": [{"index": 0, "error_code": "ENDPOINT_NOT_FOUND"}]},
    }
    theirs = Answer(False, [rel("A", "B", "knows")], None)
    report = comparison.step(
        "create_relations", {"relations": [rel("A", "B", "knows")]}, Answer(True, refusal, refusal), theirs
    )
    assert report == ["ours says an endpoint of ('A', 'B', 'knows') is missing; the official graph has both"]


def test_an_entity_search_found_for_no_listed_reason_is_reported() -> None:
    ours = {
        "entities": [ours_entity("Bob", "Person", ["tea"])],
        "relations": [],
        "next_cursor": None,
        "truncated": [],
    }
    report = Comparison().graphs(ours, graph([]), "search_nodes", {"query": "coffee"})
    assert report == ["search 'coffee': ours found 'Bob' for no reason we know"]


def test_a_short_page_with_a_cursor_is_reported() -> None:
    ours = {"entities": [theirs_entity("A", "t", [])], "relations": [], "next_cursor": "c", "truncated": []}
    assert Comparison().graphs(ours, graph([theirs_entity("A", "t", [])]), "read_graph", {}) == [
        "a page of 1 entities with a next_cursor"
    ]


def test_extras_may_not_repeat_an_official_field() -> None:
    entity = ours_entity("A", "T", [])
    entity["properties"]["observations"] = []
    assert Comparison().graphs(graph([entity]), graph([theirs_entity("A", "T", [])])) == [
        "entity 'A': properties repeat ['observations']"
    ]


def test_only_listed_differences_can_be_noted() -> None:
    with pytest.raises(AssertionError, match="not in EXPECTED"):
        Comparison().note("anything_goes")
    assert all(reason and not reason.endswith(".") for reason in EXPECTED.values())


def test_without_repeats_drops_only_later_copies_ours_lacks() -> None:
    assert without_repeats(["x", "x", "y", "y"], ["x", "x", "y"]) == ["x", "x", "y"]
    assert without_repeats(["a", "b"], ["a"]) == ["a", "b"]  # b is missing, not repeated: left to report


def test_the_docs_table_lists_exactly_the_expected_differences() -> None:
    """The memory profile's page (docs/clients/memory-profile.md) and EXPECTED list the same differences, id by id."""
    page = (Path(__file__).parents[2] / "docs" / "clients" / "memory-profile.md").read_text(encoding="utf-8")
    ids = re.findall(r"^\|.*\| `([a-z_]+)` \|$", page, flags=re.MULTILINE)
    assert sorted(ids) == sorted(EXPECTED)


def test_refusals_in_other_words_are_reported_unless_they_are_input_validation() -> None:
    ours = {"status": "rejected", "error_code": "ENTITY_NOT_FOUND", "message": "no entity Ghost", "details": {}}
    theirs = Answer(True, "Entity with name Ghost not found", None)
    assert Comparison().step("add_observations", {}, Answer(True, ours, ours), theirs) == [
        "refusals in other words: ours 'no entity Ghost' theirs 'Entity with name Ghost not found'"
    ]
    invalid = {
        "status": "rejected",
        "error_code": "INVALID_INPUT",
        "message": "the arguments do not fit",
        "details": {},
    }
    sdk = Answer(True, "MCP error -32602: Input validation error: Invalid arguments for tool x", None)
    comparison = Comparison()
    assert comparison.step("create_entities", {}, Answer(True, invalid, invalid), sdk) == []
    assert comparison.seen == {"error_text_json", "error_words", "error_structured"}


def _listed(**changes: Any) -> dict[str, Any]:
    hints = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False}
    schemas = {"input": {"type": "object", "properties": {}}, "output": None}
    tools = {
        name: {"title": name.title(), "description": "d", "annotations": dict(hints), **schemas}
        for name in IDEMPOTENT_HERE
    }
    tools["delete_entities"] = {
        "title": "Delete",
        "description": "d",
        "annotations": {**hints, "idempotentHint": True},
        **schemas,
    }
    listing = {"tools": tools, "resources": ["memory://knowledge-graph"], "capabilities": {"tools": {}}}
    return listing | changes


def test_listings_undo_only_the_listed_differences() -> None:
    theirs, seen = _listed(), set()
    ours = _listed(resources=["write-gate://schema"], capabilities={"tools": {}, "logging": {}})
    for tool in IDEMPOTENT_HERE:
        ours["tools"][tool]["annotations"]["idempotentHint"] = True
    ours["tools"]["create_entities"]["description"] = "checked against the registry"
    ours["tools"]["add_observations"]["input"] = {"type": "object", "properties": {"cursor": {"type": "string"}}}
    assert compare_listings(ours, theirs, seen.add) == []
    assert seen == {
        "idempotent_hint",
        "tool_descriptions",
        "resources",
        "capabilities",
        "read_arguments",
    }


def test_listings_report_any_other_difference() -> None:
    ours, theirs = _listed(resources=["memory://other"], capabilities={}), _listed()
    ours["tools"]["delete_entities"]["annotations"]["idempotentHint"] = False
    ours["tools"]["add_observations"]["title"] = "Append"
    ours["tools"]["create_entities"]["input"] = {"type": "object", "properties": {"force": {"type": "boolean"}}}
    ours["tools"]["create_relations"]["output"] = {"type": "object", "properties": {}}
    assert compare_listings(ours, theirs, lambda _id: None) == [
        "add_observations title: ours 'Append' theirs 'Add_Observations'",
        "create_entities input .force: only ours",
        "create_relations output only ours has one",
        "delete_entities idempotentHint: ours False theirs True",
        "resource only ours: memory://other",
        "capability tools: ours False theirs True",
    ]
    assert compare_listings(_listed(tools={}), theirs, lambda _id: None)[0].startswith("tools: ours []")
    # A tool of ours beside the official ones is reported, not excused: the gate's own (listed with --toolsets)
    # as much as any other.
    for extra in ("run_cypher", "get_history"):
        more = _listed()
        more["tools"][extra] = {"title": "", "description": "", "annotations": {}, "input": {}, "output": {}}
        assert compare_listings(more, theirs, lambda _id: None)[0].startswith("tools: ours [")

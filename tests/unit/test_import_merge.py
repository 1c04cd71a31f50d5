"""The pure half of imports: what each merge strategy does with what exists, the values a merge writes, and the
formats' parsers (records, their places, their problems)."""

import json

import pytest

from write_gate.core.import_merge import entity_action, merged_values, relation_action
from write_gate.interchange.import_parsers import parse_csv, parse_graphml, parse_json, parse_jsonl
from write_gate.interchange.import_records import EntityRecord, RelationRecord, normal_tags, split_id


@pytest.mark.parametrize(
    ("strategy", "entity", "relation"),
    [
        ("skip", "skip", "skip"),
        ("fail", "skip", "skip"),
        ("update", "overwrite", "overwrite"),
        ("replace", "overwrite", "overwrite"),
        ("merge", "merge", "merge"),
    ],
)
def test_each_strategy_on_what_exists_and_on_what_does_not(strategy, entity, relation) -> None:
    assert (entity_action(strategy, True), relation_action(strategy, True)) == (entity, relation)
    assert entity_action(strategy, False) == relation_action(strategy, False) == "create"


def test_a_merge_writes_only_what_changes() -> None:
    current = {"observations": ["a", "b"], "tags": ["x"], "importance": 5, "city": "Paris"}
    incoming = {"observations": ["b", "c"], "tags": ["w"], "importance": 3, "city": "Rome", "born": 1990}
    assert merged_values(current, incoming) == {"observations": ["a", "b", "c"], "tags": ["x", "w"], "born": 1990}
    assert merged_values(current, {"observations": ["a"], "importance": 5, "city": "Rome"}) == {}
    assert merged_values({}, {"importance": 2}) == {"importance": 2}  # a value it lacks is set


def test_tags_are_trimmed_lowercase_distinct_in_the_file_s_order() -> None:
    assert normal_tags([" Tea", "tea", "", "Chess "]) == ["tea", "chess"]


def test_an_id_is_a_label_and_its_merge_keys() -> None:
    assert split_id('Person:{"name":"Ada"}') == ("Person", {"name": "Ada"})
    assert split_id("Ada") is None and split_id('Person:{"name"') is None


def test_a_record_drops_gate_computed_fields_and_takes_its_claim() -> None:
    record = EntityRecord(
        name="Ada",
        entityType="Person",
        properties={"name": "Ada", "age": 36, "confidence": 0.9, "_p_age": [], "source": "old"},
        provenance={"source": "letters", "extraction_method": "manual"},
    )
    assert record.values() == {"age": 36}
    assert record.claim() == ("letters", "manual")
    assert EntityRecord(name="Ada", entityType="Person", source="cols").claim() == ("cols", None)


def test_jsonl_json_csv_and_graphml_give_records_with_their_places() -> None:
    lines = parse_jsonl('{"type": "entity", "name": "A", "entityType": "Person"}\n\n[1]\n')
    assert [(p.where, type(p.record).__name__, p.problem is None) for p in lines] == [
        (("line", 1), "EntityRecord", True),
        (("line", 3), "NoneType", False),
    ]
    doc = parse_json(json.dumps({"entities": [{"name": "A"}], "relations": [{"from": "A", "to": "B"}]}))
    assert [(p.where, p.problem is not None) for p in doc] == [(("index", 0), True), (("index", 0), True)]
    with pytest.raises(ValueError, match="version 1"):
        parse_json('{"format": "write-gate/json", "version": 2, "entities": []}')
    sections = parse_csv(
        "# ENTITIES\nname,entityType,observations\nA,Person,x; y\n\n# RELATIONS\nfrom,to,relationType\nA,A,KNOWS\n"
    )
    assert [(p.where, type(p.record).__name__) for p in sections] == [
        (("line", 3), "EntityRecord"),
        (("line", 7), "RelationRecord"),
    ]
    assert sections[0].record.observations == ["x", "y"]
    with pytest.raises(ValueError, match="ENTITIES"):
        parse_csv("name,entityType\n")
    with pytest.raises(ValueError, match="does not parse"):
        parse_csv("# ENTITIES\nname,entityType\n" + "x" * 200_000 + ",Person\n")
    with pytest.raises(ValueError, match="GraphML"):
        parse_graphml("<not-graphml")


def test_a_relation_needs_both_ends() -> None:
    with pytest.raises(ValueError, match="from_id or from"):
        RelationRecord.model_validate({"from": "A", "relationType": "KNOWS"})


def test_only_the_two_lists_are_unioned_and_only_importance_maximised() -> None:
    current = {"observations": ["b"], "tags": ["y"], "aliases": ["x"], "rank": 5, "importance": 2}
    incoming = {"observations": ["a"], "tags": ["x"], "aliases": ["z"], "rank": 9, "importance": 4}
    assert merged_values(current, incoming) == {"observations": ["b", "a"], "tags": ["y", "x"], "importance": 4}
    assert merged_values({"tags": "x"}, {"tags": ["y"]}) == {}  # held is no list: left alone, as held

"""`schema suggest`'s drafting and the console's drift counts (interchange/schema_suggest.py), decided without an
engine: what a rejected call's arguments name, spellings that are no identifier, and a draft name another
draft or the registry already takes."""

from collections import Counter

from write_gate.core.registry import RegistrySnapshot, SchemaEntry
from write_gate.interchange.formats import BadLine, Line
from write_gate.interchange.schema_suggest import drift_counts, suggest, suggest_counts
from write_gate.services.memory import EntityIn, RelationIn


def registry() -> RegistrySnapshot:
    return RegistrySnapshot(
        [
            SchemaEntry("Person", ("name",), ("person",), merge_keys=("name",)),
            SchemaEntry("KNOWS", kind="relationship"),
        ]
    )


def test_drift_counts_what_each_rejected_write_named_and_nothing_else() -> None:
    calls = [
        ("write_node", {"label": ":Starship"}),  # as written, without the colon
        ("write_node", {"label": ":"}),  # no label left
        ("write_node", {"label": 7}),  # not text
        ("write_relationship", {"type": "ORBITS", "from_label": "Planet", "to_label": None}),
        ("write_relationship", {"from_label": "Moon"}),  # no type at all
        ("create_entities", {"entities": [{"entityType": "planet"}, "not an entity", {"name": "untyped"}]}),
        ("create_relations", {"relations": [{"relationType": "orbits"}, ["nor a relation"], {}]}),
        ("create_entities", {"entities": None}),
        ("add_observations", {"entities": [{"entityType": "ignored"}]}),  # names no type: not counted
    ]
    entity_types, relation_types = drift_counts(calls)
    assert entity_types == Counter({"Starship": 1, "Planet": 1, "Moon": 1, "planet": 1})
    assert relation_types == Counter({"ORBITS": 1, "orbits": 1})


def test_suggest_skips_bad_lines_and_spellings_that_are_no_identifier() -> None:
    items = [
        BadLine(1, "not a JSON object"),
        Line(2, "entity", EntityIn(name="Mars", entityType="planet", observations=[])),
        Line(3, "entity", EntityIn(name="Ada", entityType="person", observations=[])),  # covered: Person absorbs it
        Line(4, "relation", RelationIn.model_validate({"from": "Mars", "to": "Sun", "relationType": "!!!"})),
        Line(5, "relation", RelationIn.model_validate({"from": "Ada", "to": "Mars", "relationType": "knows"})),
    ]
    drafted = suggest(items, registry())
    assert [entry["name"] for entry in drafted.entries] == ["Planet"]
    assert drafted.covered == [("person", "Person", 1), ("knows", "KNOWS", 1)]
    assert drafted.document() == {"entries": drafted.entries}
    no_identifier = suggest_counts(Counter({"!!!": 2}), Counter({"???": 1}), registry())
    assert (no_identifier.entries, no_identifier.covered) == ([], [])


def test_a_draft_name_the_registry_or_an_earlier_draft_takes_is_not_drafted_twice() -> None:
    """`KNOWS` written as an entity type would be a label named like a registered type; `orbit` as a relation
    type would be named like the label drafted for `ORBIT` entities just before: neither is drafted again."""
    drafted = suggest_counts(Counter({"KNOWS": 1, "ORBIT": 2}), Counter({"orbit": 3}), registry())
    assert [(entry["name"], entry.get("kind", "node")) for entry in drafted.entries] == [("ORBIT", "node")]

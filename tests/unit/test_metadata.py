"""MemoryMesh's "Key: Value" metadata read against a registry entry (core.metadata): which entries are a declared
property's value, and which stay metadata only."""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from write_gate.core.metadata import (
    deleted_fields,
    display_key,
    dropped_fields,
    entry_search_value,
    key_fold,
    metadata_properties,
    names_a_key,
    parse_entry,
    shows_query,
    with_declared_fields,
)
from write_gate.core.model import GateRejection
from write_gate.core.properties import name_fold
from write_gate.core.registry import PropertyType, RelationshipDef, SchemaEntry

NPC = SchemaEntry(
    label="Npc",
    merge_keys=("name",),
    required_properties=("name", "role"),
    property_types={
        "name": PropertyType("string"),
        "role": PropertyType("string", absorbs=("job",)),
        "currentLocation": PropertyType("string", relationship=RelationshipDef("LOCATED_IN")),
        "age": PropertyType("integer"),
        "traits": PropertyType("array", items="string"),
    },
)


SPELLINGS = {
    name_fold(spelling): name for name, spec in NPC.property_types.items() for spelling in (name, *spec.absorbs)
}


def test_entries_split_at_the_first_colon_and_space() -> None:
    assert parse_entry("Description: A wizard: grey") == ("Description", "A wizard: grey")
    assert parse_entry("  Role :  Wizard ") == ("Role", "Wizard")
    assert parse_entry("Likes pipe-weed") is None
    assert parse_entry("Time:12:00") is None  # no space after the colon: not MemoryMesh's form
    assert parse_entry(": orphan") is None


def test_declared_plain_properties_are_read_and_the_rest_left_alone() -> None:
    metadata = [
        "Role: Wizard",
        "Current Location: Rivendell",  # a relationship property: the typed tools write its edge
        "Name: Mithrandir",  # the merge key is the node's name, never metadata's
        "Age: 2019",  # an integer, as the declared type reads it
        "Traits: wise, grumpy ,",
        "Mood: calm",  # not declared
    ]
    assert metadata_properties(NPC, metadata) == {"role": "Wizard", "age": 2019, "traits": ["wise", "grumpy"]}
    assert metadata_properties(NPC, ["JOB: Smith"]) == {"role": "Smith"}  # a spelling the property absorbs
    assert metadata_properties(NPC, ["current_role: x", "ro le: Wizard"]) == {"role": "Wizard"}
    assert metadata_properties(None, ["Role: Wizard"]) == {}


def test_a_value_reads_as_its_declared_type_or_stays_text_for_the_registry_to_refuse() -> None:
    """Seed 000: add_player_character {level: 3} is "Level: 3"; add_nodes with it must satisfy a required level."""
    hero = SchemaEntry(
        label="Hero",
        merge_keys=("name",),
        property_types={
            "level": PropertyType("integer"),
            "gold": PropertyType("number"),
            "alive": PropertyType("boolean"),
            "rolls": PropertyType("array", items="integer"),
            "weights": PropertyType("array", items="number"),
        },
    )
    assert metadata_properties(hero, ["Weights: 2, 2.5"]) == {"weights": [2.0, 2.5]}  # one kind in a list
    entries = ["Level: 3", "Gold: 12.5", "Alive: TRUE", "Rolls: 4, 6"]
    assert metadata_properties(hero, entries) == {"level": 3, "gold": 12.5, "alive": True, "rolls": [4, 6]}
    whole = metadata_properties(hero, ["Gold: 3"])
    assert whole == {"gold": 3} and isinstance(whole["gold"], int)  # shown again as "Gold: 3", not "3.0"
    odd = metadata_properties(hero, ["Level: three", "Gold: nan", "Alive: yes", "Rolls: 4, six"])
    assert odd == {"level": "three", "gold": "nan", "alive": "yes", "rolls": [4, "six"]}


def test_two_entries_for_one_property_are_refused() -> None:
    with pytest.raises(GateRejection) as refused:
        metadata_properties(NPC, ["Role: Wizard", "job: Smith"])
    assert refused.value.rejected.details == {
        "field": "metadata",
        "reason": "property_given_twice",
        "property": "role",
    }


@given(st.lists(st.text(max_size=12)))
def test_any_metadata_yields_declared_text_properties_only(metadata: list[str]) -> None:
    try:
        found = metadata_properties(NPC, metadata)
    except GateRejection:
        return
    assert set(found) <= {"role", "traits"}
    assert all(isinstance(v, str) if k == "role" else isinstance(v, list) for k, v in found.items())


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("currentLocation", "Current Location"),
        ("role", "Role"),
        ("home_town", "Home Town"),
        ("HP", "HP"),
        ("x2y", "X2y"),
    ],
)
def test_a_field_is_shown_as_memorymesh_names_it(name: str, shown: str) -> None:
    assert display_key(name) == shown


def test_declared_fields_join_the_metadata_unless_an_entry_names_them() -> None:
    properties = {"name": "Gandalf", "role": "Wizard", "age": 2019, "traits": ["wise", "grey"], "currentLocation": "X"}
    shown = with_declared_fields(NPC, ["Likes pipe-weed", "ROLE: Grey Wizard"], properties)
    # The entries as written first, one naming a field with the value the node holds now (a typed update changed
    # it); the name (its key), the named role and the relationship field are not repeated.
    assert shown == ["Likes pipe-weed", "ROLE: Wizard", "Age: 2019", "Traits: wise, grey"]
    assert with_declared_fields(None, ["a"], properties) == ["a"]  # a label the registry does not hold
    # A relationship field's value is where the node's relationships of its type lead, as MemoryMesh writes it.
    linked = with_declared_fields(NPC, [], {}, {"LOCATED_IN": ["Rivendell", "Bree"], "KNOWS": ["Frodo"]})
    assert linked == ["Current Location: Rivendell, Bree"]
    # Seed 000, 3.4: an update of the relationship field replaces the entry, whichever tool wrote it.
    assert with_declared_fields(NPC, ["Current Location: Moria"], {}, {"LOCATED_IN": ["Bree"]}) == [
        "Current Location: Bree"
    ]
    assert with_declared_fields(NPC, ["Current Location: Moria"], {}, {}) == ["Current Location: Moria"]


def test_an_emptied_list_shows_its_key_with_an_empty_value() -> None:
    """Seed 000, 5.3: update_npc {traits: []} sets the key "Traits" to the empty join and rebuilds the metadata."""
    assert with_declared_fields(NPC, ["Traits: brave, wise"], {"traits": []}) == ["Traits: "]
    assert with_declared_fields(NPC, ["Role: Wizard"], {"traits": []}) == ["Role: Wizard", "Traits: "]
    assert with_declared_fields(NPC, [], {}, {"LOCATED_IN": []}) == []  # no edge: no relationship entry
    assert deleted_fields(NPC, ["Traits: "], {"traits": []}) == {"traits": None}  # deleting what it shows


@example(["job: x"], {"role": "Wizard"})  # a spelling the role absorbs
@given(st.lists(st.text(min_size=1)), st.dictionaries(st.sampled_from(["role", "age", "traits"]), st.text()))
def test_what_the_metadata_held_is_kept_in_order(metadata: list[str], properties: dict[str, str]) -> None:
    """Each entry in its place; one that names a field the node holds keeps its key and shows the held value."""
    shown = with_declared_fields(NPC, metadata, properties)[: len(metadata)]
    for written, now in zip(metadata, shown, strict=True):
        parsed = parse_entry(written)
        named = SPELLINGS.get(key_fold(parsed[0])) if parsed is not None else None  # "JOB" is the role too
        field = named if named in properties else None
        assert now == (written if field is None else f"{parsed[0]}: {properties[field]}")


def test_a_replacement_drops_the_optional_fields_it_no_longer_names_and_keeps_the_required() -> None:
    held = {"name": "Gandalf", "role": "Wizard", "age": 2000, "traits": ["wise"], "currentLocation": "x"}
    assert dropped_fields(NPC, ["Traits: wise, old", "Mood: calm"], held) == {"age": None}
    assert dropped_fields(NPC, [], {"name": "Gandalf", "role": "Wizard"}) == {}  # the role is required
    assert dropped_fields(None, [], held) == {}


def test_a_deletion_removes_a_field_it_names_with_the_value_held_and_refuses_a_required_one() -> None:
    held = {"name": "Gandalf", "role": "Wizard", "age": 2000, "traits": ["wise", "old"]}
    assert deleted_fields(NPC, ["Traits: wise, old", "Age: 1", "Mood: calm"], held) == {"traits": None}
    assert deleted_fields(NPC, ["Age: 2000"], held) == {"age": None}
    with pytest.raises(GateRejection) as refused:
        deleted_fields(NPC, ["Role: Wizard"], held)
    assert refused.value.rejected.error_code == "SCHEMA_MISSING_REQUIRED_PROPERTY"
    assert deleted_fields(NPC, ["Role: Warrior"], held) == {}  # not the value held: nothing to delete


def test_a_query_across_an_entry_s_separator_is_searched_by_the_part_after_it() -> None:
    assert entry_search_value("role: wizard") == "wizard" and entry_search_value("le: wiz ") == "wiz"
    assert entry_search_value("a: b: c") == "b: c"  # the first separator, as MemoryMesh's entries split
    assert entry_search_value("wizard") is None and entry_search_value("role:wizard") is None
    assert entry_search_value("role: ") is None and entry_search_value("role:   ") is None


def test_a_node_shows_a_query_in_its_name_type_or_entries_only() -> None:
    entries = ["Role: Wizard", "Current Location: Rivendell"]
    assert shows_query("role: wiz", "Gandalf", "npc", entries)
    assert shows_query("location: riv", "Gandalf", "npc", entries)
    assert shows_query("npc", "Gandalf", "npc", []) and shows_query("grey", "Gandalf the Grey", "npc", [])
    assert not shows_query("role: sorcerer", "Gandalf", "npc", entries)
    # What the answer does not show is not matched: a stored property such as its provenance ("llm", ":npc").
    assert not shows_query("m", "Rivendell", "location", []) and not shows_query("llm", "Gandalf", "npc", entries)
    assert shows_query("p", "Gandalf", "npc", [])  # in its type


def test_a_query_within_a_field_s_key_names_it_but_not_within_the_name_s() -> None:
    assert names_a_key(NPC, "role") and names_a_key(NPC, "ole: ") and names_a_key(NPC, "current location")
    assert names_a_key(NPC, "age: ") and names_a_key(NPC, "traits")  # every declared field shows its entry
    assert not names_a_key(NPC, "name") and not names_a_key(NPC, "role: w")  # the merge key is the node's name
    assert not names_a_key(NPC, "currentlocation")  # the key as shown: "Current Location"

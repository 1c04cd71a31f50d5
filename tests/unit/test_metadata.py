"""MemoryMesh's "Key: Value" metadata read against a registry entry (core.metadata): which entries are a declared
property's value, and which stay metadata only."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from write_gate.core.metadata import metadata_properties, parse_entry
from write_gate.core.model import GateRejection
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


def test_entries_split_at_the_first_colon_and_space() -> None:
    assert parse_entry("Description: A wizard: grey") == ("Description", "A wizard: grey")
    assert parse_entry("  Role :  Wizard ") == ("Role", "Wizard")
    assert parse_entry("Likes pipe-weed") is None
    assert parse_entry("Time:12:00") is None  # no space after the colon: not MemoryMesh's form
    assert parse_entry(": orphan") is None


def test_declared_text_properties_are_read_and_the_rest_left_alone() -> None:
    metadata = [
        "Role: Wizard",
        "Current Location: Rivendell",  # a relationship property: the typed tools write its edge
        "Name: Mithrandir",  # the merge key is the node's name, never metadata's
        "Age: 2019",  # not text: left to the metadata
        "Traits: wise, grumpy ,",
        "Mood: calm",  # not declared
    ]
    assert metadata_properties(NPC, metadata) == {"role": "Wizard", "traits": ["wise", "grumpy"]}
    assert metadata_properties(NPC, ["JOB: Smith"]) == {"role": "Smith"}  # a spelling the property absorbs
    assert metadata_properties(NPC, ["current_role: x", "ro le: Wizard"]) == {"role": "Wizard"}
    assert metadata_properties(None, ["Role: Wizard"]) == {}


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

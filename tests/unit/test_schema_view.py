"""`get_schema`'s entries, from registry entries and live counts (pure)."""

from write_gate.core.registry import PropertyType, RelationshipDef, SchemaEntry
from write_gate.core.schema_view import LabelView, RelationshipTypeView, label_view, relationship_view


def test_a_label_view_shows_everything_an_agent_needs_to_write_it() -> None:
    entry = SchemaEntry(
        "Person",
        required_properties=("name", "email"),
        remaps_from=("person", "User"),
        merge_keys=("name", "email"),
        property_types={
            "age": PropertyType("integer"),
            "city": PropertyType("string", relationship=RelationshipDef("LIVES_IN", "City")),
        },
        fallback=True,
        description="a human",
    )
    assert label_view(entry, 12, "reject") == LabelView(
        name="Person",
        description="a human",
        required_properties=["name", "email"],
        absorbs=["person", "User"],
        property_types={
            "age": {"type": "integer"},
            "city": {"type": "string", "relationship": {"type": "LIVES_IN", "to_label": "City"}},
        },
        undeclared_properties="reject",  # the gate's default, as the entry names none
        count=12,
        merge_keys=["name", "email"],
        fallback=True,
    )


def test_a_relationship_type_view_shows_its_endpoints() -> None:
    entry = SchemaEntry(
        "WORKS_FOR",
        required_properties=("since",),
        remaps_from=("EMPLOYED_BY",),
        kind="relationship",
        property_types={"since": PropertyType("integer")},
        from_labels=("Person",),
        to_labels=("Organization", "Team"),
        description="employment",
        undeclared_properties="remap",
    )
    assert relationship_view(entry, 3, "allow") == RelationshipTypeView(
        name="WORKS_FOR",
        description="employment",
        required_properties=["since"],
        absorbs=["EMPLOYED_BY"],
        property_types={"since": {"type": "integer"}},
        undeclared_properties="remap",  # the entry's own beats the gate's
        count=3,
        from_labels=["Person"],
        to_labels=["Organization", "Team"],
    )

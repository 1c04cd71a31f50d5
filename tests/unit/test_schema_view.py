"""`get_schema`'s entries, from registry entries and live counts (pure)."""

from write_gate.core.decisions import Policy
from write_gate.core.registry import ConflictPolicy, PropertyType, RelationshipDef, SchemaEntry, UndeclaredPolicy
from write_gate.core.schema_view import LabelView, RelationshipTypeView, gate_defaults, label_view, relationship_view


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
    policy = Policy(undeclared_properties=UndeclaredPolicy.REJECT, conflicts=ConflictPolicy.KEEP_BOTH)
    assert label_view(entry, 12, policy) == LabelView(
        name="Person",
        description="a human",
        required_properties=["name", "email"],
        absorbs=["person", "User"],
        property_types={
            "age": {"type": "integer"},
            "city": {"type": "string", "relationship": {"type": "LIVES_IN", "to_label": "City"}},
        },
        undeclared_properties="reject",  # the gate's default, as the entry names none
        conflict_policy="keep_both",  # likewise
        half_life_days=None,  # none of its own: each claim's extraction method's
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
        conflict_policy=ConflictPolicy.REJECT,
        half_life_days=30.0,
    )
    assert relationship_view(entry, 3, Policy()) == RelationshipTypeView(
        name="WORKS_FOR",
        description="employment",
        required_properties=["since"],
        absorbs=["EMPLOYED_BY"],
        property_types={"since": {"type": "integer"}},
        undeclared_properties="remap",  # the entry's own beats the gate's
        conflict_policy="reject",  # likewise
        half_life_days=30.0,
        count=3,
        from_labels=["Person"],
        to_labels=["Organization", "Team"],
    )


def test_the_gates_defaults_are_named_beside_the_entries() -> None:
    policy = Policy(
        conflicts=ConflictPolicy.HIGHER_CONFIDENCE_WINS,
        half_life_by_method={"llm": 30.0},
        history_retention_days=365.0,
    )
    assert gate_defaults(policy) == {
        "unknown_label_policy": "remap",
        "undeclared_property_policy": "allow",
        "conflict_policy": "higher_confidence_wins",
        "decay_half_life_days": {"llm": 30.0},
        "history_retention_days": 365.0,
    }
    assert gate_defaults(Policy())["history_retention_days"] is None  # keeps every record

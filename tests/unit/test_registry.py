import re

import pytest

from write_gate.core.registry import (
    PropertyType,
    RegistrySnapshot,
    RelationshipDef,
    SchemaEntry,
    entries_from_rows,
    entry_from_row,
)


def snapshot() -> RegistrySnapshot:
    """Built in each test, so the indexing itself runs under test."""
    return RegistrySnapshot(
        [
            SchemaEntry("Person", ("name",), ("person", "User"), merge_keys=("name",)),
            SchemaEntry("Entity", fallback=True),
            SchemaEntry("WORKS_FOR", kind="relationship", remaps_from=("EMPLOYED_BY",)),
        ]
    )


def test_lookup_and_lists() -> None:
    snap = snapshot()
    assert snap.get_entry("Person").required_properties == ("name",)
    assert snap.get_entry("WORKS_FOR") is None  # relationship types are a separate namespace
    assert snap.all_canonical_labels() == ["Entity", "Person"]
    assert snap.all_relationship_types() == ["WORKS_FOR"]
    assert snap.fallback_label() == "Entity"
    assert len(snap) == 3


@pytest.mark.parametrize(
    "label,target",
    [("person", "Person"), (":User", "Person"), ("PERSON", "Person"), ("user", "Person"), ("Nobody", None)],
)
def test_remap_by_absorbs_then_case_drift(label: str, target: str | None) -> None:
    assert snapshot().remap_target(label) == target


def test_relationship_remap() -> None:
    snap = snapshot()
    assert snap.relationship_remap_target("EMPLOYED_BY") == "WORKS_FOR"
    assert snap.relationship_remap_target("works_for") == "WORKS_FOR"
    assert snap.relationship_remap_target("DIRECTED") is None


@pytest.mark.parametrize(
    "spec,accepts,refuses",
    [
        ("integer", ["integer"], ["number", "string"]),
        ("number", ["integer", "number"], ["string"]),
        ("array<string>", ["array<string>", "array<any>"], ["string", "array<integer>"]),
        ({"type": "array", "items": {"type": "number"}}, ["array<integer>", "array<number>"], ["number"]),
    ],
)
def test_property_types(spec: object, accepts: list[str], refuses: list[str]) -> None:
    declared = PropertyType.parse(spec)  # type: ignore[arg-type]
    assert all(declared.accepts_kind(k) for k in accepts)
    assert not any(declared.accepts_kind(k) for k in refuses)


@pytest.mark.parametrize("spec", ["date", {"type": "array", "items": "map"}, {"type": "string", "enum": []}])
def test_bad_property_types(spec: object) -> None:
    with pytest.raises(ValueError):
        PropertyType.parse(spec)  # type: ignore[arg-type]


def test_entry_from_row_tolerates_damage_to_what_only_describes_an_entry() -> None:
    assert entry_from_row({"label": "bad name"}) is None
    entry = entry_from_row({"label": "Doc", "fallback": "yes", "remaps_from": None, "description": 3})
    assert entry is not None and entry.fallback is False and entry.description == ""
    row = {"label": "Doc", "remaps_from": ["File"], "property_types": '{"pages": "integer"}', "kind": "node"}
    entry = entry_from_row(row)
    assert entry is not None and entry.remaps_from == ("File",) and entry.property_types["pages"].type == "integer"


@pytest.mark.parametrize(
    "damage,said",
    [
        ({"required_properties": 7}, "required_properties must be a list of text"),
        ({"merge_keys": ["name", 3]}, "merge_keys must be a list of text"),
        ({"property_types": "{not json"}, "property_types cannot be read"),
        ({"property_types": '{"serial": "integr"}'}, "property_types cannot be read"),
        ({"property_types": "[1]"}, "property_types cannot be read"),
        ({"kind": "nodee"}, "kind must be node or relationship"),
        ({"from_labels": {"a": 1}}, "from_labels must be a list of text"),
    ],
)
def test_constraints_that_cannot_be_read_leave_the_entry_out_saying_why(damage: dict, said: str) -> None:
    """Fail closed: loaded with its constraints dropped, the entry would let through what they stop."""
    rows = [{"label": "Bad", **damage}, {"label": "Good", "required_properties": ["name"]}]
    entries, left_out = entries_from_rows(rows)
    assert [entry.label for entry in entries] == ["Good"]
    assert len(left_out) == 1 and left_out[0].startswith("Bad: " + said), left_out


def test_a_single_text_for_a_list_is_a_list_of_one_and_a_map_of_types_is_read() -> None:
    row = {"label": "Part", "required_properties": "serial", "property_types": {"serial": "integer"}}
    entry = entry_from_row(row)
    assert entry is not None and entry.required_properties == ("serial",)
    assert entry.property_types["serial"].type == "integer"
    entries, left_out = entries_from_rows([{"label": "bad name"}, row])
    assert [e.label for e in entries] == ["Part"] and left_out == ["'bad name': a name that is no plain identifier"]


def test_labels_written_by_hand_with_a_leading_colon_are_read_without_it() -> None:
    """DESIGN: a leading ':' is stripped from a label; a `:Schema` node created by hand (`name: ':Meetup'`) as the
    seed spells labels is an entry for Meetup, and its endpoints' labels are read the same way."""
    entry = entry_from_row({"label": ":Meetup", "absorbs": [":meet"]})
    assert entry is not None and entry.label == "Meetup"
    rel = entry_from_row(
        {"label": "::HOSTS", "kind": "relationship", "from_labels": [":Person"], "to_labels": ":Meetup"}
    )
    assert rel is not None and (rel.label, rel.from_labels, rel.to_labels) == ("HOSTS", ("Person",), ("Meetup",))
    assert entry_from_row({"label": ":"}) is None


def test_a_snapshot_keeps_its_version_and_its_two_namespaces_apart() -> None:
    entries = [
        SchemaEntry("Person", merge_keys=("name",)),
        SchemaEntry("KNOWS", kind="relationship", fallback=True),  # a type is never the fallback label
        SchemaEntry("Entity", fallback=True),
        SchemaEntry("Thing", fallback=True),  # the first fallback wins
    ]
    snap = RegistrySnapshot(iter(entries), version=7)  # any iterable, read once
    assert snap.version == 7 and RegistrySnapshot([]).version is None
    assert snap.all_canonical_labels() == ["Entity", "Person", "Thing"] and snap.all_relationship_types() == ["KNOWS"]
    assert snap.get_entry("Person") is entries[0] and snap.get_relationship("KNOWS") is entries[1]
    assert snap.get_relationship("Person") is None and snap.fallback_label() == "Entity" and len(snap) == 4
    assert RegistrySnapshot([SchemaEntry("KNOWS", kind="relationship", fallback=True)]).fallback_label() is None


def test_remap_exact_absorbs_then_case_folded_with_canonical_names_winning() -> None:
    snap = RegistrySnapshot(
        [
            SchemaEntry("Person", remaps_from=("ORG", ":XmlUser")),
            SchemaEntry("Org"),
            SchemaEntry("REFERS_TO", kind="relationship", remaps_from=("XREF", ":CITES")),
            SchemaEntry("Xref", kind="relationship"),
        ]
    )
    assert snap.remap_target("ORG") == "Person"  # an exact alias
    assert snap.remap_target("org") == "Org"  # case drift: the canonical name wins over the alias
    assert snap.remap_target("XmlUser") == snap.remap_target("::xmluser") == "Person"  # colons never count
    assert snap.remap_target("Nobody") is None
    assert snap.relationship_remap_target("XREF") == "REFERS_TO"
    assert snap.relationship_remap_target("xref") == "Xref"
    assert snap.relationship_remap_target(":CITES") == snap.relationship_remap_target("cites") == "REFERS_TO"
    assert snap.relationship_remap_target("Person") is None


@pytest.mark.parametrize(
    "spec,described",
    [
        ("integer", "integer"),
        ("array<string>", "array<string>"),
        ({"type": "array", "items": "number"}, "array<number>"),
    ],
)
def test_a_type_describes_itself_as_written(spec: object, described: str) -> None:
    assert PropertyType.parse(spec).describe() == described  # type: ignore[arg-type]


def test_parse_keeps_what_a_definition_says() -> None:
    assert PropertyType.parse("string") == PropertyType("string")
    assert PropertyType.parse({"type": "string", "items": "integer", "enum": ["a", "b"], "description": "d"}) == (
        PropertyType("string", enum=("a", "b"), description="d")
    )
    assert PropertyType.parse({"type": "array", "items": "integer", "enum": [1, 2]}) == PropertyType(
        "array", items="integer", enum=(1, 2)
    )


def test_parse_relationship_properties() -> None:
    spec = {"type": "string", "relationship": {"type": "LOCATED_IN", "to_label": "Location", "description": "where"}}
    one = PropertyType.parse(spec)
    assert one == PropertyType("string", relationship=RelationshipDef("LOCATED_IN", "Location", "where"))
    assert not one.many
    many = PropertyType.parse({"type": "array", "items": "string", "relationship": {"type": "KNOWS"}})
    assert many.relationship == RelationshipDef("KNOWS", None, "") and many.many
    assert not PropertyType.parse("array<string>").many


NAMES_TARGETS = "a relationship property names its targets: its type is string or array of string"
NEEDS_TYPE = "relationship needs 'type', a plain identifier"
TO_LABEL = "relationship 'to_label', when given, must be a plain identifier"


@pytest.mark.parametrize(
    "spec,message",
    [
        ("date", "type must be one of"),
        ("array(string>", "type must be one of"),
        ({"type": "array", "items": "map"}, "array items must be one of"),
        ({"type": "string", "enum": []}, "enum must be a non-empty list"),
        ({"type": "string", "enum": "dev"}, "enum must be a non-empty list"),
        ({"type": "integer", "relationship": {"type": "KNOWS"}}, NAMES_TARGETS),
        ({"type": "array", "items": "integer", "relationship": {"type": "KNOWS"}}, NAMES_TARGETS),
        ({"type": "string", "relationship": "KNOWS"}, NEEDS_TYPE),
        ({"type": "string", "relationship": {"type": 5}}, NEEDS_TYPE),
        ({"type": "string", "relationship": {"type": "not one"}}, NEEDS_TYPE),
        ({"type": "string", "relationship": {"type": "K", "to_label": "a b"}}, TO_LABEL),
        ({"type": "string", "relationship": {"type": "K", "to_label": 5}}, TO_LABEL),
    ],
)
def test_bad_definitions_say_what_is_wrong(spec: object, message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        PropertyType.parse(spec)  # type: ignore[arg-type]


def test_to_json_round_trips_through_parse() -> None:
    specs = [
        {"type": "integer"},
        {"type": "array", "items": "string", "enum": ["a", "b"], "description": "tags"},
        {"type": "string", "relationship": {"type": "LOCATED_IN", "to_label": "Location", "description": "where"}},
        {"type": "array", "items": "string", "relationship": {"type": "KNOWS"}},
    ]
    for spec in specs:
        assert PropertyType.parse(spec).to_json() == spec


def test_entry_from_row_reads_every_field() -> None:
    row = {
        "label": "WORKS_FOR",
        "required_properties": ["since"],
        "remaps_from": ["EMPLOYED_BY"],
        "kind": "relationship",
        "merge_keys": ["id"],
        "property_types": '{"since": "integer"}',
        "fallback": True,
        "from_labels": ["Person"],
        "to_labels": ["Organization"],
        "description": "employment",
        "typed_tools": True,
        "additional_properties": True,
    }
    assert entry_from_row(row) == SchemaEntry(
        label="WORKS_FOR",
        required_properties=("since",),
        remaps_from=("EMPLOYED_BY",),
        kind="relationship",
        merge_keys=("id",),
        property_types={"since": PropertyType("integer")},
        fallback=True,
        from_labels=("Person",),
        to_labels=("Organization",),
        description="employment",
        typed_tools=True,
        additional_properties=True,
    )


@pytest.mark.parametrize("kind", [None, "", "node"])
def test_entry_from_row_defaults(kind: object) -> None:
    row = {"label": "Doc", "kind": kind, "description": None, "fallback": "yes", "typed_tools": 1}
    assert entry_from_row(row) == SchemaEntry("Doc")


@pytest.mark.parametrize("absorbs", [["a b"], "mail", [3]])
def test_absorbs_that_are_no_list_of_identifiers_are_refused_saying_so(absorbs: object) -> None:
    with pytest.raises(ValueError) as refused:
        PropertyType.parse({"type": "string", "absorbs": absorbs})
    assert str(refused.value) == "absorbs must be a list of plain identifiers"


@pytest.mark.parametrize("types", [None, ""])
def test_property_types_absent_or_empty_declare_none(types: object) -> None:
    """Absent or empty: no types (a bad spec leaves the entry out: above)."""
    row = {"label": "Doc", "property_types": types} if types is not None else {"label": "Doc"}
    assert entry_from_row(row) == SchemaEntry("Doc")
